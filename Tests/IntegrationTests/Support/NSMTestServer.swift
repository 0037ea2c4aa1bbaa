import Foundation
import XCTest

/// The strict NSM server of `Tests/Peers/nsm_server.py` (python3-liblo), run as a child: it
/// launches jackhost with `NSM_URL`, answers its announce, opens a session, and reports every
/// message and every breach of the API as JSON lines, which this class collects. Commands go
/// to its standard input.
final class NSMTestServer: @unchecked Sendable {
    // @unchecked: `events` is guarded by `lock`; the rest is set in init.
    let process = Process()
    let log: String
    private let input = Pipe()
    private let lock = NSLock()
    private var collected: [[String: Any]] = []

    /// Starts the server, which launches jackhost for a session at `path` named `displayName`
    /// with `clientID`, on the private server `jackServer`.
    init(path: String, displayName: String, clientID: String, jackServer: String, log: String, openTypes: String = "sss") throws {
        self.log = log
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Peers/nsm_server.py").path
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [
            script, "--client", JackhostBinary.path, "--path", path, "--name", displayName, "--id", clientID, "--log", log,
            "--jack-server", jackServer, "--open-types", openTypes, "--env", "JACK_DEFAULT_SERVER=\(jackServer)",
        ]
        var environment = ProcessInfo.processInfo.environment
        environment["JACK_NO_START_SERVER"] = "1"
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = input
        process.standardError = FileHandle.standardError
        try process.run()
        Thread.detachNewThread { [self] in
            var pending = Data()
            while true {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: 10) {
                    let line = pending[pending.startIndex..<newline]
                    pending = pending[(newline + 1)...]
                    if let event = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] {
                        lock.withLock { collected.append(event) }
                    }
                }
            }
        }
    }

    /// Every event so far.
    var events: [[String: Any]] { lock.withLock { collected } }

    /// The API breaches the server found.
    var violations: [String] { events.filter { $0["event"] as? String == "violation" }.compactMap { $0["text"] as? String } }

    /// Messages jackhost sent to `path`.
    func messages(_ path: String) -> [[String: Any]] {
        events.filter { $0["event"] as? String == "message" && $0["path"] as? String == path }
    }

    /// The arguments of jackhost's `/nsm/client/message` lines.
    var statusLines: [String] { messages("/nsm/client/message").compactMap { ($0["args"] as? [Any])?.last as? String } }

    /// jackhost's pid, from the launch.
    var clientPID: pid_t { pid_t(events.first { $0["event"] as? String == "launched" }?["pid"] as? Int ?? 0) }

    /// jackhost's exit status, once it exited.
    var clientExit: Int? { events.first { $0["event"] as? String == "exit" }?["status"] as? Int }

    /// Sends one command line (`save`, `loaded`, `show`, `flood 500`, `term`, `vanish`).
    func command(_ line: String) { input.fileHandleForWriting.write(Data((line + "\n").utf8)) }

    /// Waits until an event satisfies `predicate`; returns it, or nil after `timeout`.
    @discardableResult
    func waitFor(timeout: Double = 15, _ predicate: ([String: Any]) -> Bool) -> [String: Any]? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let event = events.first(where: predicate) { return event }
            usleep(20_000)
        }
        return nil
    }

    /// Waits for a message from jackhost to `path` whose first argument is `first` (when given).
    @discardableResult
    func waitForMessage(_ path: String, first: String? = nil, timeout: Double = 15) -> [String: Any]? {
        waitFor(timeout: timeout) { event in
            event["event"] as? String == "message" && event["path"] as? String == path
                && (first == nil || (event["args"] as? [Any])?.first as? String == first)
        }
    }

    /// jackhost's stderr and stdout so far.
    var clientLog: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    /// Ends the server (its stdin closes: it SIGTERMs jackhost if still running) and waits.
    func stop() {
        try? input.fileHandleForWriting.close()
        let deadline = Date().addingTimeInterval(40)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { process.terminate() }
    }
}
