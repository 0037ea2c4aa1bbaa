import CPosix
import Glibc
import JackHost

/// Carries what hooks print to jackhost's stderr, line by line and prefixed
/// (`jackhost: hook on-file-close: LINE`), on a thread of its own.
///
/// Each hook run gets a pipe of its own for its stdout and stderr, so that no hook, and no child
/// a hook leaves behind, ever holds jackhost's descriptors 1 and 2: a caller reading jackhost's
/// output (`$(jackhost … 2>&1)`) sees EOF when jackhost exits. Both ends are close-on-exec; only
/// the spawn's dup2 puts the write end on the hook's 1 and 2.
///
/// - Lines are cut at ``lineLimit`` bytes, and at most ``openLimit`` outputs are open at once
///   (a left-behind child keeps its output open); past that a hook's output goes to /dev/null.
/// - Nothing here is on the audio or writer threads, and nobody waits for the relay but the hook
///   runner, for a bounded ``settle(_:timeout:)``. A relay still open at exit is abandoned.
final class HookOutputRelay: @unchecked Sendable {
    // @unchecked: `sources`, `nextID` and `busy` are guarded by `lock`; the rest is immutable
    // after init, and each source's splitter is only used by the relay thread.

    /// The longest line relayed, in bytes; the rest of a longer line is left out, and the cut is said.
    static let lineLimit = 1024
    /// How many hook outputs may be open at once.
    static let openLimit = 16

    /// One hook run's pipe: its read end, the hook's kind for the prefix, and its partial line.
    private struct Source {
        let descriptor: Int32
        let label: String
        var splitter = LineSplitter(limit: HookOutputRelay.lineLimit)
    }

    private let lock = Lock()
    private var sources: [Int: Source] = [:]
    private var nextID = 0
    /// Whether the relay thread is reading or printing (so ``settle(_:timeout:)`` waits for it).
    private var busy = false
    /// The relay thread's wake-up pipe: a byte in it means "a source was added".
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let emit: @Sendable (String) -> Void

    /// Starts the relay thread; nil when no pipe can be made.
    ///
    /// - Parameter emit: Receives each line with its prefix, without the newline (default:
    ///   jackhost's stderr, after "jackhost: ").
    init?(emit: @escaping @Sendable (String) -> Void = { printNote($0) }) {
        var ends: [Int32] = [-1, -1]
        guard cposix_pipe_cloexec(&ends) == 0 else { return nil }
        wakeRead = ends[0]
        wakeWrite = ends[1]
        _ = fcntl(wakeWrite, F_SETFL, O_NONBLOCK)
        self.emit = emit
        WorkerThread.start(name: "jackhost-hookout") { [self] in runLoop() }
    }

    /// A new pipe for one hook run labelled `label` (`on-file-close`): the write end for the
    /// spawn (close it once the hook is spawned) and an id for ``settle(_:timeout:)``; nil when
    /// ``openLimit`` outputs are still open or no pipe can be made.
    func open(label: String) -> (id: Int, writeEnd: Int32)? {
        var ends: [Int32] = [-1, -1]
        guard cposix_pipe_cloexec(&ends) == 0 else { return nil }
        let id: Int? = lock.withLock {
            guard sources.count < Self.openLimit else { return nil }
            nextID += 1
            sources[nextID] = Source(descriptor: ends[0], label: label)
            return nextID
        }
        guard let id else {
            ends.forEach { _ = close($0) }
            return nil
        }
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
        return (id, ends[1])
    }

    /// Waits up to `timeout` seconds until everything the run `id` wrote so far has been relayed
    /// (so a hook's lines come before jackhost's next message about it).
    func settle(_ id: Int, timeout: Double) {
        let deadline = monotonicSeconds() + timeout
        while monotonicSeconds() < deadline {
            let settled = lock.withLock { () -> Bool in
                guard !busy else { return false }
                guard let source = sources[id] else { return true }
                var unread: Int32 = 0
                return ioctl(source.descriptor, UInt(FIONREAD), &unread) != 0 || unread == 0
            }
            if settled { return }
            usleep(2_000)
        }
    }

    /// How many hook outputs are open now.
    var openCount: Int { lock.withLock { sources.count } }

    // MARK: The relay thread

    private func runLoop() {
        while true {
            let watched = lock.withLock { sources.map { (id: $0.key, descriptor: $0.value.descriptor) } }
            var polled = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            polled += watched.map { pollfd(fd: $0.descriptor, events: Int16(POLLIN), revents: 0) }
            if poll(&polled, nfds_t(polled.count), -1) < 0 {
                if errno != EINTR { usleep(10_000) }
                continue
            }
            if polled[0].revents != 0 { drainWake() }
            for (index, source) in watched.enumerated() where polled[index + 1].revents != 0 {
                relay(source.id, source.descriptor)
            }
        }
    }

    /// Empties the wake-up pipe (its bytes only say "look again").
    private func drainWake() {
        var bytes = [UInt8](repeating: 0, count: 64)
        _ = bytes.withUnsafeMutableBytes { read(wakeRead, $0.baseAddress, $0.count) }
    }

    /// Reads what is there from one source and prints its complete lines; at EOF prints the
    /// partial line and closes the source.
    private func relay(_ id: Int, _ descriptor: Int32) {
        lock.withLock { busy = true }
        defer { lock.withLock { busy = false } }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count < 0 && (errno == EINTR || errno == EAGAIN) { return }
        guard var source = lock.withLock({ sources[id] }) else { return }
        let lines = count > 0 ? source.splitter.feed(buffer[0..<count]) : source.splitter.finish()
        lock.withLock {
            if count > 0 {
                sources[id] = source
            } else {
                sources[id] = nil
                close(descriptor)
            }
        }
        for line in lines { emit("hook \(source.label): \(line)") }
    }
}

/// Cuts a byte stream into lines of at most `limit` bytes, as text fit for one line of a
/// terminal: invalid UTF-8 and control characters (but tab) become `?`, a CR before the LF goes.
struct LineSplitter {
    /// The longest line, in bytes.
    let limit: Int
    private var pending: [UInt8] = []
    /// Inside a line already cut short: its bytes are skipped up to its newline.
    private var skipping = false

    /// Creates a splitter for lines of at most `limit` bytes.
    init(limit: Int) { self.limit = max(1, limit) }

    /// The lines `bytes` completes.
    mutating func feed(_ bytes: ArraySlice<UInt8>) -> [String] {
        var lines: [String] = []
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                if !skipping { lines.append(Self.text(pending)) }
                pending.removeAll(keepingCapacity: true)
                skipping = false
            } else if !skipping {
                pending.append(byte)
                if pending.count >= limit {
                    lines.append(Self.text(pending) + " [cut at \(limit) bytes]")
                    pending.removeAll(keepingCapacity: true)
                    skipping = true
                }
            }
        }
        return lines
    }

    /// The last line, when the stream ended without a newline.
    mutating func finish() -> [String] {
        defer { pending.removeAll() }
        return pending.isEmpty || skipping ? [] : [Self.text(pending)]
    }

    /// `bytes` as printable text, without a trailing CR.
    static func text(_ bytes: [UInt8]) -> String {
        let trimmed = bytes.last == UInt8(ascii: "\r") ? bytes.dropLast() : bytes[...]
        let decoded = String(decoding: trimmed, as: UTF8.self)
        return String(
            String.UnicodeScalarView(
                decoded.unicodeScalars.map { scalar in
                    let printable = scalar == "\t" || !(scalar.properties.generalCategory == .control) && scalar != "\u{FFFD}"
                    return printable ? scalar : "?"
                }))
    }
}
