import JackHost
import JackHostConsumers

/// With `--channel-files`: decides every file's name once the inputs are wired, prints them
/// with the rule that named each, and checks exactly those names for overwrites before the
/// recorder creates any file (a collision is status 2, and no file is made).
enum ChannelFileDecision {
    static func decide(for recorder: Recorder, host: CaptureHost, quiet: Bool) throws {
        guard let channelPlan = recorder.channelPlan else { return }
        let choices = ChannelFileNaming.decide(host: host, given: channelPlan.given)
        let names = choices.map(\.name)
        do {
            if let given = channelPlan.given, given.count != names.count {
                throw UsageError("--channel-names gives \(given.count) names for \(names.count) inputs; give one name per input")
            }
            do { try recorder.validateChannelFiles(names) } catch { throw UsageError(error.description) }
        } catch {
            channelPlan.refuse()
            host.stop(drainLimit: 0)
            throw error
        }
        channelPlan.settle(names)
        guard !quiet else { return }
        let files = TakeFiles.channelFileNames(names)
        for (index, choice) in choices.enumerated() {
            printNote("channel file \(index + 1): \(TakeFiles.channelPath(recorder.path, channel: files[index])) (\(choice.rule))")
        }
    }
}
