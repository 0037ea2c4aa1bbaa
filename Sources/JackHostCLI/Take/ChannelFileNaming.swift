import JackHost
import JackHostConsumers

/// Decides the names of a take's channel files (`--channel-files`) once the inputs are wired,
/// and says which rule named each one.
///
/// For each input, the first rule that applies:
/// 1. `--channel-names`, as the user gave them;
/// 2. the input's own pretty-name, when someone set one (jackhost sets "Input N" itself) and
///    the server's metadata can be trusted;
/// 3. the pretty-name of its one source, on the same condition;
/// 4. the full name of its one source (`system:capture_1` → `system_capture_1`);
/// 5. `in_N`, for an input with no source or several.
///
/// Metadata is trusted only where it belongs to the server (``JackClient/metadataIsPerServer``,
/// PipeWire's libjack): jack2's store is shared by every server of the user, so a pretty-name
/// read there may be another server's, and the same command would name its files differently
/// from run to run.
enum ChannelFileNaming {
    /// One input's file name and the rule that gave it.
    struct Choice: Equatable {
        var name: String
        var rule: String
    }

    /// The names for `host`'s inputs, in order.
    static func decide(host: CaptureHost, given: [String]?, trustsMetadata: Bool = JackClient.metadataIsPerServer) -> [Choice] {
        host.inputPortNames.enumerated().map { index, port in
            choose(
                index: index, given: given, ownPrettyName: trustsMetadata ? host.prettyName(ofPort: port) : nil,
                sources: host.connections(ofInput: port),
                sourcePrettyName: { trustsMetadata ? host.prettyName(ofPort: $0) : nil })
        }
    }

    /// One input's choice (pure, for tests): `index` from 0.
    static func choose(
        index: Int, given: [String]?, ownPrettyName: String?, sources: [String], sourcePrettyName: (String) -> String?
    ) -> Choice {
        if let given, index < given.count { return Choice(name: given[index], rule: "--channel-names") }
        if let own = ownPrettyName, !own.isEmpty, own != "Input \(index + 1)" {
            return Choice(name: own, rule: "the input's pretty-name")
        }
        guard sources.count == 1 else {
            return Choice(name: "in_\(index + 1)", rule: sources.isEmpty ? "no source connected" : "\(sources.count) sources connected")
        }
        if let theirs = sourcePrettyName(sources[0]), !theirs.isEmpty {
            return Choice(name: theirs, rule: "the pretty-name of its source \(sources[0])")
        }
        return Choice(name: sources[0], rule: "its source's port name")
    }
}
