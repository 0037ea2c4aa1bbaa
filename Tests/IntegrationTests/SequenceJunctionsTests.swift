import JackHostTesting
import XCTest

/// The test oracle itself: PipeWire's one-quantum channel skew is recognised exactly, and a
/// recorder's defect that looks almost like it is not.
final class SequenceJunctionsTests: XCTestCase {
    /// Two channels of the sequence from frame 40960 for 8192 frames, with frames 47104-48127
    /// replaced as `skew` says.
    private func take(_ skew: (Int, Int) -> Float?) -> [[Float]] {
        (0..<2).map { channel in
            (40960..<49152).map { frame in skew(channel, frame) ?? TestSignal.sequenceValue(channel: channel, frame: frame) }
        }
    }

    func testAOneQuantumSkewIsRecognisedAndADamagedOneIsNot() {
        let skewed = take { channel, frame in
            (47104..<48128).contains(frame) && channel == 1 ? TestSignal.sequenceValue(channel: 1, frame: frame + 1024) : nil
        }
        let junctions = SequenceJunctions(skewed, skippingLeadIn: true)
        XCTAssertEqual(junctions.junctions.count, 2, "\(junctions.junctions)")
        XCTAssertEqual(junctions.oneQuantumChannelSkews(quantum: 1024).count, 2)

        // The same, with one sample of channel 0 changed: a defect, not PipeWire's skew.
        let damaged = take { channel, frame in
            if frame == 47500 && channel == 0 { return 0.5 }
            return (47104..<48128).contains(frame) && channel == 1 ? TestSignal.sequenceValue(channel: 1, frame: frame + 1024) : nil
        }
        XCTAssertEqual(SequenceJunctions(damaged, skippingLeadIn: true).oneQuantumChannelSkews(quantum: 1024), [])

        // Channel 1 half a quantum away: not the known skew.
        let half = take { channel, frame in
            (47104..<48128).contains(frame) && channel == 1 ? TestSignal.sequenceValue(channel: 1, frame: frame + 512) : nil
        }
        XCTAssertEqual(SequenceJunctions(half, skippingLeadIn: true).oneQuantumChannelSkews(quantum: 1024), [])
    }
}
