import Foundation
import Synchronization

@testable import JackHost

/// A client whose process callback overruns the period on demand, to cause real xruns.
final class StallingClient: @unchecked Sendable {
    let client: JackClient
    let stallsRequested = Atomic<Int>(0)

    init(server: String) throws {
        client = try JackClient(name: "jhstall", server: server)
        _ = try client.registerAudioInput(named: "in")
        client.setProcessCallback(
            { _, context in
                let me = Unmanaged<StallingClient>.fromOpaque(context!).takeUnretainedValue()
                if me.stallsRequested.load(ordering: .relaxed) > 0 {
                    me.stallsRequested.subtract(1, ordering: .relaxed)
                    usleep(40_000)  // 7.5 periods of 5.3 ms: the server must report an xrun
                }
                return 0
            }, context: Unmanaged.passUnretained(self).toOpaque())
        try client.activate()
    }

    func stop() {
        client.deactivate()
        client.close()
    }
}
