// LiveViewSpectrum.swift
//
// The live view's spectrum: a deferred consumer (its own worker thread, fed by the host's
// lock-free ring, never the real-time thread) that keeps the latest `size` samples of every
// channel and, about 25 times a second, transforms the channels viewers have asked for.
//
// The FFT is FFTW's (Debian's libfftw3-dev, single precision): a field library, planned once
// per format in `prepare` (FFTW's planner is not thread-safe; executing a plan is), with
// FFTW_ESTIMATE so planning takes microseconds and measures nothing. A hand-written FFT would
// need its own tests for what FFTW has had for decades.

import CFFTW
import FoundationEssentials
import Glibc
import JackHost
import Synchronization

/// Keeps the latest samples of each channel and publishes the magnitude spectrum of the
/// channels viewers watch (see ``LiveViewServer``).
package final class SpectrumAnalyser: DeferredAudioConsumer, @unchecked Sendable {
    // @unchecked: the history, plan and buffers belong to the worker thread (and `prepare`,
    // which runs before it); other threads touch only the Mutex-guarded `published` and `wanted`.
    /// The name in counters and reports.
    package let consumerName = "live-spectrum"
    /// Samples per transform: 4096 gives 11.7 Hz bins at 48 kHz.
    let size: Int
    /// Transforms per second, at most.
    let rate: Double

    /// One channel's latest spectrum.
    struct Spectrum: Sendable, Equatable {
        /// Which channel, 0-based.
        var channel: Int
        /// The sample rate it was measured at.
        var sampleRate: Double
        /// The transform size; bin `k` is at `k * sampleRate / size` Hz.
        var size: Int
        /// Magnitudes in dBFS (a full-scale sine reads 0 dB at its bin), bins 0...size/2.
        var decibels: [Float]
    }

    private let published = Mutex<[Int: Spectrum]>([:])
    /// Channel → when a viewer last asked for it (monotonic seconds).
    private let wanted = Mutex<[Int: Double]>([:])

    private var history: [[Float]] = []
    private var writeIndex = 0
    private var filled = 0
    private var sampleRate = 48000.0
    private var framesSinceTransform = 0
    private var window: [Float] = []
    private var input: UnsafeMutablePointer<Float>?
    private var output: UnsafeMutablePointer<fftwf_complex>?
    private var plan: fftwf_plan?

    /// Transforms of `size` samples (a power of two from 64), at most `rate` per second.
    init(size: Int = 4096, rate: Double = 25) {
        precondition(size >= 64 && size & (size - 1) == 0, "the transform size must be a power of two from 64")
        self.size = size
        self.rate = rate
    }

    deinit { releasePlan() }

    /// Sizes the history and plans the transform.
    package func prepare(format: StreamFormat) throws {
        releasePlan()
        history = Array(repeating: Array(repeating: 0, count: size), count: format.channelCount)
        writeIndex = 0
        filled = 0
        framesSinceTransform = 0
        sampleRate = format.sampleRate
        // Hann: a sine between bins loses at most 1.4 dB, and its leakage falls fast.
        window = (0..<size).map { Float(0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(size))) }
        let inputBuffer = fftwf_alloc_real(size)!
        let outputBuffer = fftwf_alloc_complex(size / 2 + 1)!
        input = inputBuffer
        output = outputBuffer
        plan = fftwf_plan_dft_r2c_1d(Int32(size), inputBuffer, outputBuffer, UInt32(FFTW_ESTIMATE | FFTW_DESTROY_INPUT))
    }

    private func releasePlan() {
        if let plan { fftwf_destroy_plan(plan) }
        if let input { fftwf_free(input) }
        if let output { fftwf_free(output) }
        plan = nil
        input = nil
        output = nil
    }

    /// **Worker thread.** Appends the block to each channel's history and transforms when due.
    package func consume(_ block: AudioBlock) {
        let channels = min(block.channelCount, history.count)
        let frames = block.frameCount
        guard channels > 0, frames > 0 else { return }
        for channel in 0..<channels {
            let samples = block.buffers[channel]
            history[channel].withUnsafeMutableBufferPointer { ring in
                // Only the last `size` frames of a long block matter.
                let skip = max(0, frames - size)
                var at = (writeIndex + skip) % size
                for index in skip..<frames {
                    ring[at] = samples[index]
                    at = at + 1 == size ? 0 : at + 1
                }
            }
        }
        writeIndex = (writeIndex + frames) % size
        filled = min(size, filled + frames)
        framesSinceTransform += frames
        guard framesSinceTransform >= Int(sampleRate / rate) else { return }
        framesSinceTransform = 0
        let now = monotonicSeconds()
        let watched = wanted.withLock { wanted in
            wanted = wanted.filter { now - $0.value < 2 }
            return wanted.keys.filter { $0 < channels }.sorted()
        }
        var spectra: [Int: Spectrum] = [:]
        for channel in watched { spectra[channel] = transform(channel: channel) }
        published.withLock { $0 = spectra }
    }

    /// The spectrum of one channel's latest `size` samples (zeros before the history fills).
    private func transform(channel: Int) -> Spectrum {
        let bins = size / 2 + 1
        var decibels = [Float](repeating: -.infinity, count: bins)
        guard let input, let output, let plan else { return Spectrum(channel: channel, sampleRate: sampleRate, size: size, decibels: decibels) }
        history[channel].withUnsafeBufferPointer { ring in
            for index in 0..<size { input[index] = ring[(writeIndex + index) % size] * window[index] }
        }
        fftwf_execute(plan)
        // Amplitude of a sine = 2|X|/sum(window) = 4|X|/size for Hann.
        let scale = 4 / Float(size)
        UnsafeMutableRawPointer(output).withMemoryRebound(to: Float.self, capacity: bins * 2) { complex in
            for bin in 0..<bins {
                let re = complex[2 * bin], im = complex[2 * bin + 1]
                let magnitude = (re * re + im * im).squareRoot() * scale
                decibels[bin] = magnitude > 0 ? 20 * log10(magnitude) : -.infinity
            }
        }
        return Spectrum(channel: channel, sampleRate: sampleRate, size: size, decibels: decibels)
    }

    /// Nothing to flush.
    package func finish() {}

    /// Asks for `channel`'s spectrum for the next two seconds (any thread), and returns its
    /// latest one, if there is one yet.
    func spectrum(of channel: Int) -> Spectrum? {
        let now = monotonicSeconds()
        wanted.withLock { wanted in
            // A bounded set: at most 16 channels are transformed, the latest asked win.
            if wanted[channel] == nil && wanted.count >= 16, let oldest = wanted.min(by: { $0.value < $1.value })?.key {
                wanted[oldest] = nil
            }
            wanted[channel] = now
        }
        return published.withLock { $0[channel] }
    }

    /// Quantises decibels to one byte each, 0 = -140 dB or less, 255 = 0 dB or more (0.55 dB
    /// steps), as the page decodes them.
    static func quantise(_ decibels: [Float]) -> [UInt8] {
        decibels.map { value in
            guard value.isFinite else { return value > 0 ? 255 : 0 }
            return UInt8(max(0, min(255, ((value + 140) * 255 / 140).rounded())))
        }
    }
}
