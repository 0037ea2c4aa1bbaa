import Synchronization

/// A bounded, lock-free, single-producer/single-consumer ring of plain values.
///
/// The ring splits into a ``Writer`` and a ``Reader`` (see ``makeRing(capacity:)``)
/// so that the two ends cannot be swapped by accident: exactly one thread may
/// hold the writer and one the reader. Neither end ever blocks, allocates or
/// makes a system call, so the writer may live on JACK's real-time thread.
///
/// Capacity is rounded up to a power of two and positions are free-running
/// counters masked on access, as in swift-nio's `CircularBuffer`: `count` is
/// simply `written - read`, and "full" and "empty" never look alike.
public final class SPSCRing<Element: BitwiseCopyable>: @unchecked Sendable {
    // @unchecked: `storage` slots are written only through the one Writer and read only through
    // the one Reader, ordered by the release/acquire pairs on `written` and `read`. Each end's
    // cached copy of the other's index (`writerCachedRead`, `readerCachedWritten`) is a plain
    // field that only that end's thread touches.
    //
    // Layout, in declaration order: what both ends only read; the writer's line; the reader's
    // line. Each end keeps the last index it loaded from the other and loads it again only when
    // that copy says full (writer) or empty (reader), as Erik Rigtorp's SPSCQueue does: a writer
    // with room to spare then never reads the line the reader stores to, and the real-time
    // thread's push costs no transfer of a line from the reader's core (FINDINGS.md, F11).
    /// The number of elements the ring holds when full.
    public let capacity: Int
    private let mask: Int
    private let storage: UnsafeMutablePointer<Element>
    private let beforeWriter = CacheLinePadding()
    /// Elements written so far (advanced only by the writer, with release ordering).
    private let written = Atomic<Int>(0)
    /// The reader's `read` as the writer last loaded it (writer only).
    private var writerCachedRead = 0
    private let beforeReader = CacheLinePadding()
    /// Elements read so far (advanced only by the reader, with release ordering).
    private let read = Atomic<Int>(0)
    /// The writer's `written` as the reader last loaded it (reader only).
    private var readerCachedWritten = 0
    private let afterReader = CacheLinePadding()

    private init(capacity requested: Int) {
        precondition(requested > 0, "ring capacity must be positive")
        var size = 1
        while size < requested { size <<= 1 }
        capacity = size
        mask = size - 1
        storage = .allocate(capacity: size)
    }

    deinit { storage.deallocate() }

    /// Makes a ring that holds at least `capacity` elements and returns its two ends.
    ///
    /// ```swift
    /// let ends = SPSCRing<Int>.makeRing(capacity: 64)
    /// let writer = ends.writer   // each end moves to its one owner; neither can be copied
    /// let reader = ends.reader
    /// ```
    public static func makeRing(capacity: Int) -> Ends {
        let ring = SPSCRing(capacity: capacity)
        return Ends(writer: Writer(ring: ring), reader: Reader(ring: ring))
    }

    /// The two ends of a new ring, to be moved apart. (A tuple cannot hold noncopyable values.)
    @frozen public struct Ends: ~Copyable {
        /// The producing end.
        public let writer: Writer
        /// The consuming end.
        public let reader: Reader
    }

    /// The number of elements waiting; exact from either end, approximate elsewhere.
    public var count: Int { written.load(ordering: .acquiring) &- read.load(ordering: .acquiring) }

    /// The producing end. **Real-time safe.**
    ///
    /// Noncopyable: exactly one owner, on one thread, may push.
    public struct Writer: ~Copyable, @unchecked Sendable {
        // @unchecked: it only holds the ring, whose shared state is atomic; being noncopyable,
        // the end itself can be in one place only.
        /// The ring behind this end.
        public let ring: SPSCRing<Element>

        /// Appends `element`; returns false, changing nothing, when the ring is full.
        @inline(__always)
        public func push(_ element: Element) -> Bool {
            let writeIndex = ring.written.load(ordering: .relaxed)
            guard hasRoom(at: writeIndex) else { return false }
            (ring.storage + (writeIndex & ring.mask)).initialize(to: element)
            ring.written.store(writeIndex &+ 1, ordering: .releasing)
            return true
        }

        /// **Real-time safe.** Whether one more element fits: from the cached read index while
        /// it shows room, else from the reader's index loaded again.
        @inline(__always)
        public var hasRoom: Bool { hasRoom(at: ring.written.load(ordering: .relaxed)) }

        @inline(__always)
        private func hasRoom(at writeIndex: Int) -> Bool {
            if writeIndex &- ring.writerCachedRead < ring.capacity { return true }
            ring.writerCachedRead = ring.read.load(ordering: .acquiring)
            return writeIndex &- ring.writerCachedRead < ring.capacity
        }

        /// Free slots, as seen by the writer (loads the reader's index).
        public var availableSpace: Int {
            ring.capacity - (ring.written.load(ordering: .relaxed) &- ring.read.load(ordering: .acquiring))
        }
    }

    /// The consuming end. **Real-time safe.**
    ///
    /// Noncopyable: exactly one owner, on one thread, may pop.
    public struct Reader: ~Copyable, @unchecked Sendable {
        // @unchecked: as for ``Writer``.
        /// The ring behind this end.
        public let ring: SPSCRing<Element>

        /// The oldest element without removing it, or nil when empty.
        @inline(__always)
        public func peek() -> Element? {
            let readIndex = ring.read.load(ordering: .relaxed)
            guard hasElement(at: readIndex) else { return nil }
            return (ring.storage + (readIndex & ring.mask)).pointee
        }

        /// Removes and returns the oldest element, or nil when empty.
        @inline(__always)
        public func pop() -> Element? {
            let readIndex = ring.read.load(ordering: .relaxed)
            guard hasElement(at: readIndex) else { return nil }
            let element = (ring.storage + (readIndex & ring.mask)).pointee
            ring.read.store(readIndex &+ 1, ordering: .releasing)
            return element
        }

        /// Whether an element waits at `readIndex`: from the cached write index while it shows
        /// one, else from the writer's index loaded again (acquiring, so its element is visible).
        @inline(__always)
        private func hasElement(at readIndex: Int) -> Bool {
            if ring.readerCachedWritten != readIndex { return true }
            ring.readerCachedWritten = ring.written.load(ordering: .acquiring)
            return ring.readerCachedWritten != readIndex
        }

        /// Elements waiting, as seen by the reader.
        public var availableElements: Int {
            ring.written.load(ordering: .acquiring) &- ring.read.load(ordering: .relaxed)
        }
    }

    /// Checks the ring's invariants; for tests only.
    public func testOnly_verifyInvariants() -> Bool {
        let w = written.load(ordering: .acquiring)
        let r = read.load(ordering: .acquiring)
        return capacity & mask == 0 && w &- r >= 0 && w &- r <= capacity
    }
}
