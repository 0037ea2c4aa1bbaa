import Glibc
import JackHostSupport

/// Told of every change of a take's state (the terminal meter, the live view, systemd).
protocol TakeObserver: AnyObject {
    /// Called on the main thread after the controller entered `state`.
    func takeStateChanged(to state: TakeController.State)
}

/// A duty that hears, after each of its commands, what the controller made of it (the browser
/// answers each request with it).
protocol TakeCommandAnswering: AnyObject {
    /// Called on the main thread after `command` was handled: its effects and the state after it.
    func answer(_ command: TakeController.Command, effects: [TakeController.Effect], state: TakeController.State)
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
    @discardableResult
    func send(_ command: TakeController.Command, to controller: inout TakeController) -> [TakeController.Effect] {
        let before = controller.state
        let effects = controller.handle(command)
        for effect in effects { perform(effect) }
        guard controller.state != before else { return effects }
        for observer in observers { observer.takeStateChanged(to: controller.state) }
        return effects
    }

    /// Ticks until a quit is accepted, and returns its reason.
    func run(_ controller: inout TakeController) -> TakeController.StopReason {
        while true {
            let now = monotonicSeconds()
            for duty in duties {
                for command in duty.tick(now: now) {
                    let effects = send(command, to: &controller)
                    (duty as? TakeCommandAnswering)?.answer(command, effects: effects, state: controller.state)
                    if case .stopping(let reason) = controller.state { return reason }
                }
            }
            usleep(Self.interval)
        }
    }
}
