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
    // the one Reader, ordered by the release/acquire pairs on `written` and `read`.
    /// The number of elements the ring holds when full.
    public let capacity: Int
    private let mask: Int
    private let storage: UnsafeMutablePointer<Element>
    /// Elements written so far (advanced only by the writer, with release ordering).
    private let written = Atomic<Int>(0)
    /// Elements read so far (advanced only by the reader, with release ordering).
    private let read = Atomic<Int>(0)

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
            let readIndex = ring.read.load(ordering: .acquiring)
            guard writeIndex &- readIndex < ring.capacity else { return false }
            (ring.storage + (writeIndex & ring.mask)).initialize(to: element)
            ring.written.store(writeIndex &+ 1, ordering: .releasing)
            return true
        }

        /// Free slots, as seen by the writer.
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
            guard ring.written.load(ordering: .acquiring) != readIndex else { return nil }
            return (ring.storage + (readIndex & ring.mask)).pointee
        }

        /// Removes and returns the oldest element, or nil when empty.
        @inline(__always)
        public func pop() -> Element? {
            let readIndex = ring.read.load(ordering: .relaxed)
            guard ring.written.load(ordering: .acquiring) != readIndex else { return nil }
            let element = (ring.storage + (readIndex & ring.mask)).pointee
            ring.read.store(readIndex &+ 1, ordering: .releasing)
            return element
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
