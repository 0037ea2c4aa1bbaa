import JackHostConsumers
import JackHostLiveView

extension SystemdNotifier: TakeObserver {
    /// `STOPPING=1` once the take ends.
    func takeStateChanged(to state: TakeController.State) {
        if case .stopping = state { stopping() }
    }
}

extension MeterDisplay: TakeObserver {
    /// The meter stops drawing once the take ends (the summary follows).
    func takeStateChanged(to state: TakeController.State) {
        if case .stopping = state { stop() }
    }
}

extension LiveViewServer: TakeObserver {
    /// The live view closes once the take ends.
    func takeStateChanged(to state: TakeController.State) {
        if case .stopping = state { stop() }
    }
}
