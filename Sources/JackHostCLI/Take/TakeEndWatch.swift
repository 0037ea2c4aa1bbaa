import JackHost
import JackHostConsumers

/// The ways a take ends by itself: `--duration` reached, the server gone for good, the stream's
/// reader gone, the first xrun with `--stop-on-xrun`, and a recorder that failed (which ends
/// the run only when nothing else, a meter or a stream, still has work).
final class TakeEndWatch: TakeDuty {
    private let host: CaptureHost
    private let recorder: Recorder?
    private let stream: StreamWriter?
    private let stopOnXrun: Bool
    private let othersContinue: Bool
    /// Whether the recorder's failure was printed (the summary then does not repeat it).
    private(set) var reportedRecorderFailure = false

    init(host: CaptureHost, recorder: Recorder?, stream: StreamWriter?, stopOnXrun: Bool, othersContinue: Bool) {
        self.host = host
        self.recorder = recorder
        self.stream = stream
        self.stopOnXrun = stopOnXrun
        self.othersContinue = othersContinue
    }

    func tick(now: Double) -> [TakeController.Command] {
        if host.isComplete { return [.quit(.init(.complete))] }
        if host.isServerLost {
            let message = JackError.serverLost(reason: "the server shut down").description
            return [.quit(.init(.serverLost, status: .serverLost, message: message))]
        }
        if let stream, stream.readerClosed {
            let message = "the stream's reader went away (a closed pipe); the stream ended after \(stream.framesWritten) frames"
            return [.quit(.init(.streamReaderClosed, status: .failure, message: message))]
        }
        if stopOnXrun && host.statistics.xruns > 0 {
            let message = "stopped at the first xrun (--stop-on-xrun); the take up to it is kept"
            return [.quit(.init(.xrun, status: .failure, message: message))]
        }
        if let failure = recorder?.failure, !reportedRecorderFailure {
            printError(failure.description)
            reportedRecorderFailure = true
            if !othersContinue { return [.quit(.init(.recorderFailed))] }
        }
        return []
    }
}
