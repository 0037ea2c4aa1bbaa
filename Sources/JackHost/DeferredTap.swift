/// A deferred consumer built from closures: the quickest way to tap the inputs.
///
/// The closures are `@Sendable`: `block` runs on the tap's worker thread, `prepare` and
/// `finish` on the thread that starts and stops the host (or the supervisor's, on a reconnect).
public final class DeferredTap: DeferredAudioConsumer, Sendable {
    /// The name shown in reports.
    public let consumerName: String
    private let onPrepare: @Sendable (StreamFormat) throws -> Void
    private let onBlock: @Sendable (AudioBlock) -> Void
    private let onFinish: @Sendable () -> Void

    /// Creates a tap; `block` runs on the tap's worker thread for every block.
    public init(
        name: String = "tap",
        prepare: @escaping @Sendable (StreamFormat) throws -> Void = { _ in },
        finish: @escaping @Sendable () -> Void = {},
        block: @escaping @Sendable (AudioBlock) -> Void
    ) {
        consumerName = name
        onPrepare = prepare
        onBlock = block
        onFinish = finish
    }

    /// Forwards to the `prepare` closure.
    public func prepare(format: StreamFormat) throws { try onPrepare(format) }
    /// Forwards to the `block` closure.
    public func consume(_ block: AudioBlock) { onBlock(block) }
    /// Forwards to the `finish` closure.
    public func finish() { onFinish() }
}
