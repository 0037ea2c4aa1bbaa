import CSndFile
import FoundationEssentials
import Glibc

/// Audio for driving plugins in tests: generated signals, and files read with libsndfile.
public enum PluginTestAudio {
    /// `frames` samples of a sine, starting at phase 0 (computed in Double, then rounded to Float).
    public static func sine(frequency: Double, amplitude: Float = 1, sampleRate: Double = 48000, frames: Int) -> [Float] {
        let step = 2 * Double.pi * frequency / sampleRate
        return (0..<frames).map { amplitude * Float(sin(step * Double($0))) }
    }

    /// An audio file decoded to planar Float32, with its sample rate.
    public struct File: Sendable, Equatable {
        /// Frames per second, from the file's header.
        public var sampleRate: Double
        /// `channels[c][i]` is frame i of channel c.
        public var channels: [[Float]]
    }

    /// Reads any format libsndfile reads (WAV, FLAC, CAF, W64, ...) into planar floats.
    public static func read(_ path: String) throws(PluginTestDriverError) -> File {
        var info = SF_INFO()
        guard let file = sf_open(path, Int32(SFM_READ), &info) else {
            throw .cannotReadFile(path: path, reason: String(cString: sf_strerror(nil)))
        }
        defer { sf_close(file) }
        let channelCount = Int(info.channels), frames = Int(info.frames)
        var interleaved = [Float](repeating: 0, count: channelCount * frames)
        let read = Int(sf_readf_float(file, &interleaved, sf_count_t(frames)))
        var channels = Array(repeating: [Float](repeating: 0, count: read), count: channelCount)
        for frame in 0..<read {
            for channel in 0..<channelCount { channels[channel][frame] = interleaved[frame * channelCount + channel] }
        }
        return File(sampleRate: Double(info.samplerate), channels: channels)
    }
}
