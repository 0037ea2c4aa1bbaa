import CSignals
import JackHost
import JackHostPlugins

/// How a run ended once everything stopped: the reason, the host's final counters, and what
/// the plugins and hooks did in the end. Made by ``finish(_:reason:)``, read by ``TakeSummary``.
struct TakeEnding {
    let reason: TakeController.StopReason
    let statistics: CaptureStatistics
    /// One line per plugin that crashed, hung or was bypassed.
    let pluginFailures: [String]
    /// A bypass in an isolated plugin's own process: said when it happened, status 4 only.
    let bypassedInChild: Bool
    let hookCounts: HookRunner.Counts?

    /// Stops the host, draining within limits: 5 s after a normal end, half a second after a
    /// stop signal (every command ends within a second of one), and no longer once another
    /// signal arrives. Then the isolated plugins end (they drain and finish) and the hooks of
    /// the files just finalised get a bounded wait.
    static func finish(_ take: RunningTake, reason: TakeController.StopReason) -> TakeEnding {
        let stopsSoFar = csignals_stop_requests()
        let anotherStop = { csignals_stop_requests() > stopsSoFar }
        take.host.stop(drainLimit: stopsSoFar > 0 ? 0.5 : nil, abandonWhen: anotherStop)
        let statistics = take.host.statistics
        var failures: [String] = []
        for plugin in take.parts.takeIsolatedPlugins() {
            let fate = plugin.stop(signalled: stopsSoFar > 0, takeFrames: statistics.capturedFrames)
            if fate.failed {
                failures.append(CaptureReport.isolatedPluginFailure(plugin.displayName, fate, takeFrames: statistics.capturedFrames))
            }
        }
        // A hook still running after the wait is left running.
        let quiet = take.plan.quiet
        let hookCounts = take.parts.hooks?.finish(
            timeout: HookRunner.exitWait, abandonWhen: anotherStop,
            waiting: { if !quiet { printNote("waiting up to \(Int(HookRunner.exitWait)) s for hooks to finish (Ctrl-C leaves them running)") } })
        var bypassedInChild = false
        for plugin in take.parts.plugins {
            guard let watchdog = plugin.watchdog, watchdog.isBypassed.load(ordering: .acquiring) else { continue }
            if take.link != nil {
                bypassedInChild = true
            } else {
                failures.append("plugin \(plugin.name) was bypassed: \(watchdog.bypassDescription)")
            }
        }
        return TakeEnding(
            reason: reason, statistics: statistics, pluginFailures: failures, bypassedInChild: bypassedInChild, hookCounts: hookCounts)
    }
}
