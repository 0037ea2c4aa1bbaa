/// 64 bytes of nothing, stored between the fields one thread writes and the fields another
/// thread writes, so that the two never share a cache line.
///
/// A Swift class lays its stored properties out in declaration order, so a padding property
/// keeps the properties before it at least a line away from those after it. Without it, a
/// reader's store to its own index invalidates the line that holds the writer's index and
/// everything beside it, and the real-time writer takes a miss for a field the reader never
/// touches (false sharing; Benchmarks/FINDINGS.md, F11).
struct CacheLinePadding: BitwiseCopyable {
    private let words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
}
