extension Array where Element == [Float] {
    /// Calls `body` with stable pointers to each inner array's storage.
    func withUnsafeBufferPointers<R>(_ body: (UnsafeBufferPointer<UnsafePointer<Float>>) -> R) -> R {
        let pointers = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: count)
        let copies = map { inner -> UnsafeMutablePointer<Float> in
            let copy = UnsafeMutablePointer<Float>.allocate(capacity: Swift.max(inner.count, 1))
            copy.initialize(from: inner, count: inner.count)
            return copy
        }
        for (index, copy) in copies.enumerated() { pointers[index] = UnsafePointer(copy) }
        defer {
            copies.forEach { $0.deallocate() }
            pointers.deallocate()
        }
        return body(UnsafeBufferPointer(start: pointers, count: count))
    }
}
