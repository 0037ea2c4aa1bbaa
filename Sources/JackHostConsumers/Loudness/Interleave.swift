import JackHostTypes

extension AudioBufferListView {
    /// Copies `count` frames from `offset` of `channels` (in that order) into `scratch`,
    /// interleaved, growing it when needed, and hands the interleaved frames to `body`: what
    /// libebur128 reads. Worker threads only (it may allocate).
    func interleaving<R>(
        _ channels: [Int], from offset: Int, count: Int, into scratch: inout [Float], _ body: (UnsafePointer<Float>) -> R
    ) -> R {
        let needed = count * channels.count
        if scratch.count < needed { scratch = [Float](repeating: 0, count: needed) }
        return scratch.withUnsafeMutableBufferPointer { interleaved in
            for (slot, channel) in channels.enumerated() {
                let samples = self[channel]
                for frame in 0..<count { interleaved[frame * channels.count + slot] = samples[offset + frame] }
            }
            return body(interleaved.baseAddress!)
        }
    }
}
