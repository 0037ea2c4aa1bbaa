import Glibc
import JackHostSupport

/// Told of every change of a take's state (the terminal meter, the live view, systemd).
protocol TakeObserver: AnyObject {
    /// Called on the main thread after the controller entered `state`.
    func takeStateChanged(to state: TakeController.State)
}

/// The run's one loop: every 20 ms each duty ticks, its commands go to the controller, the
/// controller's effects are carried out, and observers hear every change of state. It ends
/// when the controller accepts a quit.
struct TakeLoop {
    let duties: [TakeDuty]
    let observers: [TakeObserver]
    let perform: (TakeController.Effect) -> Void

    /// The tick, in microseconds.
    static let interval: useconds_t = 20_000

    /// Hands one command to the controller, carries out its effects and tells the observers.
    func send(_ command: TakeController.Command, to controller: inout TakeController) {
        let before = controller.state
        for effect in controller.handle(command) { perform(effect) }
        guard controller.state != before else { return }
        for observer in observers { observer.takeStateChanged(to: controller.state) }
    }

    /// Ticks until a quit is accepted, and returns its reason.
    func run(_ controller: inout TakeController) -> TakeController.StopReason {
        while true {
            let now = monotonicSeconds()
            for duty in duties {
                for command in duty.tick(now: now) {
                    send(command, to: &controller)
                    if case .stopping(let reason) = controller.state { return reason }
                }
            }
            usleep(Self.interval)
        }
    }
}
