import JackHostConsumers

/// With a trigger the recorder decides itself (`--transport`, `--freewheel`, `--trigger LEVEL`):
/// tells the controller when a take opens or closes, so that its observers follow.
final class TakeWatch: TakeDuty {
    private let recorder: Recorder
    private var open = false

    init(recorder: Recorder) { self.recorder = recorder }

    func tick(now: Double) -> [TakeController.Command] {
        let isOpen = recorder.isTakeOpen
        guard isOpen != open else { return [] }
        open = isOpen
        return [.takeObserved(open: isOpen)]
    }
}
