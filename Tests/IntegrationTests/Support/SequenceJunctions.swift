import Foundation
import JackHostTesting

/// A take read as the generator's sequence (``TestSignal/sequenceValue(channel:frame:)``):
/// runs of aligned frames, and every place where the sequence does not simply go on.
///
/// Two recorders on the same ports of a synchronous server read the same port buffers in the
/// same cycles, so whatever the graph delivered (a period netjack2 handed twice, skipped or
/// tore) is in both takes, at the same place in the generator's sequence, though the takes
/// start at different file frames. Comparing junctions by their content, not by file frame,
/// tells the graph's breaks from a recorder's own: a block jackhost dropped, repeated or
/// misaligned shows as a junction the independent recorder does not have.
struct SequenceJunctions {
    /// One place where the take does not go on from frame number `before` to `before + 1`:
    /// the frames between the last aligned frame and the next one (silence, channels out of
    /// step, anything that is not an aligned frame), and the frame number it resumes at.
    /// `before` is nil for a take that opens inside such a stretch, `after` for one that ends in it.
    struct Junction: Hashable, CustomStringConvertible {
        var before: Int?
        /// The frames in between, interleaved, as bit patterns.
        var between: [UInt32]
        var after: Int?
        /// The file frame (in the take it was found in) where the sequence first went astray.
        var fileFrame: Int

        /// Two junctions are the same break when they join the same frame numbers through the
        /// same frames, wherever in their files they lie.
        static func == (a: Junction, b: Junction) -> Bool {
            a.before == b.before && a.after == b.after && a.between == b.between
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(before)
            hasher.combine(after)
            hasher.combine(between)
        }

        var description: String {
            let from = before.map(String.init) ?? "start", to = after.map(String.init) ?? "end"
            let frames = between.isEmpty ? "" : " through \(between.count) odd sample(s)"
            return "file frame \(fileFrame): \(from) -> \(to)\(frames)"
        }
    }

    /// The junctions that are PipeWire's known channel skew and nothing else: the server handed
    /// the reader its two ports from adjacent cycles, so for whole `quantum`-frame blocks channel
    /// 0 carries frames f, f+1, ... and channel 1 the sequence `quantum` frames earlier or later.
    /// Every sample of such a run is a valid pair of the sequence, which the reader decodes as
    /// aligned frames of a far-off number N (channel 1's offset lands in the high 16 bits): so the
    /// skew shows as two junctions, into N and back out, with nothing in between. Only that exact
    /// shape is recognised (N's low bits are f's, its high bits f's plus 31 x `quantum`, the run a
    /// whole number of blocks from a block boundary); a damaged, shifted or reordered sample (a
    /// recorder's defect) decodes to no such run. Two channels only.
    func oneQuantumChannelSkews(quantum: Int) -> [Junction] {
        var skews: [Junction] = []
        for (into, outOf) in zip(junctions, junctions.dropFirst()) {
            guard into.between.isEmpty, outOf.between.isEmpty, let before = into.before, let far = into.after,
                let last = outOf.before, let resumed = outOf.after
            else { continue }
            let first = before + 1, length = last - far + 1
            guard first % quantum == 0, length > 0, length % quantum == 0, far & 0xFFFF == first & 0xFFFF else { continue }
            let offset = ((far >> 16) - (first >> 16)) & 0xFFFF
            guard offset == (31 * quantum) & 0xFFFF || offset == (-31 * quantum) & 0xFFFF else { continue }
            guard resumed == first + length || resumed == first + length + quantum else { continue }
            skews += [into, outOf]
        }
        return skews
    }

    /// Frames before the first aligned frame when the take was read with `skippingLeadIn`
    /// (a recorder's ports are connected after its take starts, one by one: silence, then
    /// perhaps a period with one channel sounding before the other).
    var leadIn = 0
    /// Every junction after the lead-in, in file order.
    var junctions: [Junction] = []
    /// Every frame number that appears as an aligned frame.
    var alignedNumbers = Set<Int>()
    /// The first and last aligned frame numbers (nil when no frame is aligned).
    var firstNumber: Int?
    var lastNumber: Int?
    /// Frames after the lead-in that are silent on every channel.
    var silentFrames = 0
    /// Frames after the lead-in that are neither silent on every channel nor aligned across them.
    var misalignedFrames = 0

    /// Reads `channels` (two or more, channels 0 and 1 naming the whole frame number).
    /// With `skippingLeadIn`, whatever comes before the first aligned frame is the lead-in,
    /// not a junction; without it (a window cut from inside a take), it is a junction with
    /// no `before`.
    init(_ channels: [[Float]], skippingLeadIn: Bool) {
        let frames = channels.first?.count ?? 0
        /// The frame number that every channel of frame `i` carries, or nil. Channels 0 and 1
        /// together decode to *some* frame number whatever they hold, and a 0 in either (a port
        /// not yet connected, or one jackhost lost) decodes to one that matches: so a frame with
        /// a silent channel is aligned only where it continues the sequence (`expected`), as
        /// the sequence's own zeros (once in 65,536 frames on each channel) do.
        func aligned(_ i: Int, expected: Int?) -> Int? {
            guard channels.count >= 2, channels.contains(where: { $0[i] != 0 }) else { return nil }
            let number = SequenceCheck.frame(at: i, in: channels)
            if channels.contains(where: { $0[i] == 0 }) && number != expected { return nil }
            for c in channels.indices where channels[c][i].bitPattern != TestSignal.sequenceValue(channel: c, frame: number).bitPattern {
                return nil
            }
            return number
        }
        var previous: Int?
        var between: [UInt32] = []
        var strayStart: Int?
        var started = !skippingLeadIn
        for i in 0..<frames {
            guard let number = aligned(i, expected: between.isEmpty ? previous.map { ($0 + 1) & 0xFFFF_FFFF } : nil) else {
                if !started { continue }
                if channels.allSatisfy({ $0[i] == 0 }) { silentFrames += 1 } else { misalignedFrames += 1 }
                if strayStart == nil { strayStart = i }
                between.append(contentsOf: channels.map { $0[i].bitPattern })
                continue
            }
            if !started {
                started = true
                leadIn = i
            } else if (previous == nil && !between.isEmpty)
                || (previous != nil && (previous.map({ ($0 + 1) & 0xFFFF_FFFF }) != number || !between.isEmpty))
            {
                junctions.append(Junction(before: previous, between: between, after: number, fileFrame: strayStart ?? i))
            }
            if firstNumber == nil { firstNumber = number }
            lastNumber = number
            alignedNumbers.insert(number)
            previous = number
            between = []
            strayStart = nil
        }
        if !between.isEmpty { junctions.append(Junction(before: previous, between: between, after: nil, fileFrame: strayStart ?? frames)) }
        if !started { leadIn = frames }
    }

    /// The junctions of this take that `reference` (an independent recorder's take of the same
    /// ports, covering this one) does not have. A junction at either end of this take, cut off
    /// by its start or its end, only has to match the part of a reference junction it shows.
    func junctions(missingFrom reference: SequenceJunctions) -> [Junction] {
        let known = Set(reference.junctions)
        return junctions.filter { junction in
            if known.contains(junction) { return false }
            if junction.after == nil {
                return !reference.junctions.contains { $0.before == junction.before && $0.between.starts(with: junction.between) }
            }
            if junction.before == nil {
                return !reference.junctions.contains { $0.after == junction.after && $0.between.reversed().starts(with: junction.between.reversed()) }
            }
            return true
        }
    }

    /// Why `reference` cannot vouch for this take, if it cannot: it must hold this take's
    /// first and last aligned frame numbers (it started before and stopped after).
    func coverageProblem(by reference: SequenceJunctions) -> String? {
        guard let first = firstNumber, let last = lastNumber else { return "no aligned frame in the take" }
        if !reference.alignedNumbers.contains(first) || !reference.alignedNumbers.contains(last) {
            return
                "the independent take (frame numbers \(reference.firstNumber ?? -1)...\(reference.lastNumber ?? -1)) does not cover this one (\(first)...\(last))"
        }
        return nil
    }
}
