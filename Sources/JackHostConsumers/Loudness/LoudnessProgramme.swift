/// What one loudness measurement listens to: one input, or a programme of several inputs
/// with a BS.1770 channel layout (`--programme 1-2`, `--programme 1-6:5.1`).
public struct LoudnessProgramme: Sendable, Equatable {
    /// A channel layout, which gives each channel its BS.1770 weight.
    public enum Layout: String, Sendable, CaseIterable {
        /// One channel, weight 1.
        case mono
        /// Left and right, weight 1 each.
        case stereo
        /// L, R, C, LFE, Ls, Rs (SMPTE order): the LFE is left out and the surrounds weigh 1.41.
        case surround51 = "5.1"

        /// How many channels it has.
        public var channelCount: Int {
            switch self {
            case .mono: 1
            case .stereo: 2
            case .surround51: 6
            }
        }
    }

    /// What the summary, the results and the meter call it: `in_3`, or `1-2`.
    public let name: String
    /// The inputs, 0-based, in the layout's order.
    public let channels: [Int]
    /// How the channels are weighted.
    public let layout: Layout

    /// One input, measured alone (mono).
    public init(input index: Int) {
        name = "in_\(index + 1)"
        channels = [index]
        layout = .mono
    }

    /// Reads `--programme FIRST-LAST[:LAYOUT]` (inputs 1-based); the layout defaults by count
    /// (1 mono, 2 stereo, 6 5.1). The error is one line that says what to write instead.
    public init(parsing text: String) throws(LoudnessProgrammeError) {
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let range = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        guard (1...2).contains(range.count), let first = Int(range[0]), let last = Int(range[range.count - 1]), first >= 1, last >= first
        else {
            throw LoudnessProgrammeError("--programme \"\(text)\" is not FIRST-LAST[:LAYOUT] with inputs from 1 (e.g. 1-2, 3-8:5.1)")
        }
        let count = last - first + 1
        let layout: Layout
        if parts.count == 2 {
            guard let named = Layout(rawValue: String(parts[1])) else {
                throw LoudnessProgrammeError("--programme \"\(text)\": unknown layout \"\(parts[1])\"; use mono, stereo or 5.1")
            }
            layout = named
        } else {
            guard let byCount = Layout.allCases.first(where: { $0.channelCount == count }) else {
                throw LoudnessProgrammeError("--programme \"\(text)\" has \(count) inputs; name a layout (mono, stereo, 5.1) with as many")
            }
            layout = byCount
        }
        guard layout.channelCount == count else {
            throw LoudnessProgrammeError("--programme \"\(text)\": \(layout.rawValue) has \(layout.channelCount) channels, not \(count)")
        }
        name = count == 1 ? "in_\(first)" : "\(first)-\(last)"
        channels = Array((first - 1)...(last - 1))
        self.layout = layout
    }
}

/// A `--programme` value that cannot be used.
public struct LoudnessProgrammeError: Error, CustomStringConvertible {
    /// One line for stderr.
    public let description: String
    init(_ description: String) { self.description = description }
}
