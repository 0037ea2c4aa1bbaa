// PluginResultSource.swift
//
// Where the host reads one plugin's published results, wherever the plugin runs. Shared by the
// CLI (the meter display, the summary, `--results FILE`) and the live view (JackHostLiveView),
// so it lives here rather than in either.

import JackHost

/// The results plugins publish (ABI 2), gathered from plugins in this process and from the
/// processes of isolated ones, for the meter display, the summary and `--results FILE`.
package struct PluginResultSource: @unchecked Sendable {
    // @unchecked: `latest` reads only atomics (a plugin in this process) or lock-guarded state
    // (an isolated plugin's forwarded values), so any thread may call it.
    /// The plugin's name.
    package let plugin: String
    /// Its position among the `--plugin` options, from 1 (two instances of one plugin differ here).
    package let instance: Int
    /// The latest values, in declaration order.
    package let latest: () -> [PublishedResult]
    /// Frames of the take the plugin did not take in (it crashed, hung, fell behind or was
    /// bypassed): more than 0 marks its results partial. A plugin in this process misses none.
    package var missedFrames: () -> Int

    /// A source named `plugin` (instance `instance`, from 1) whose values `latest` reads, and
    /// whose missed frames `missedFrames` counts (none for a plugin in this process).
    package init(
        plugin: String, instance: Int, latest: @escaping () -> [PublishedResult], missedFrames: @escaping () -> Int = { 0 }
    ) {
        self.plugin = plugin
        self.instance = instance
        self.latest = latest
        self.missedFrames = missedFrames
    }

    /// `FrequencyEstimator: frequency.hz 440.0 Hz  confidence 0.98`, or nil before any value.
    package var line: String? {
        let results = latest()
        guard !results.isEmpty else { return nil }
        let missed = missedFrames()
        return "\(plugin): "
            + results.map { "\($0.name) \(Self.format($0.value))\($0.unit.isEmpty ? "" : " \($0.unit)")" }.joined(separator: "  ")
            + (missed > 0 ? "  (partial: the plugin missed \(missed) frames of the take)" : "")
    }

    /// Up to four decimals, without trailing zeros noise for whole numbers.
    package static func format(_ value: Double) -> String {
        guard value.isFinite else { return value.isNaN ? "nan" : (value > 0 ? "inf" : "-inf") }
        if value == value.rounded() && abs(value) < 1e15 { return String(Int64(value)) }
        return value.formatted(places: abs(value) >= 100 ? 2 : 4)
    }
}
