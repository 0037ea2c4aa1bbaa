import JackHostTypes

/// Feeds consumers without a server, by building blocks by hand (shared by this target's tests).
func withBlock(_ channels: [[Float]], sequence: UInt64 = 0, dropped: Int = 0, xrun: Bool = false, _ body: (AudioBlock) -> Void) {
    let pointers = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: channels.count)
    let copies = channels.map { channel -> UnsafeMutablePointer<Float> in
        let copy = UnsafeMutablePointer<Float>.allocate(capacity: max(1, channel.count))
        copy.initialize(from: channel, count: channel.count)
        return copy
    }
    for (index, copy) in copies.enumerated() { pointers[index] = UnsafePointer(copy) }
    defer {
        copies.forEach { $0.deallocate() }
        pointers.deallocate()
    }
    let view = AudioBufferListView(channels: pointers, channelCount: channels.count, frameCount: channels.first?.count ?? 0)
    body(
        AudioBlock(
            buffers: view, timestamp: .init(frameTime: 0, microseconds: 0, sequence: sequence, xrunSincePreviousCycle: xrun),
            droppedFramesBefore: dropped))
}
