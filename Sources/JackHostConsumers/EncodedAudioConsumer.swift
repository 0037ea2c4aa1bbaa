import JackHostTypes

/// A consumer that takes samples already converted, so that a ``SharedConverter`` can
/// convert once for several of them.
public protocol EncodedAudioConsumer: AnyObject {
    /// A short name for reports.
    var consumerName: String { get }
    /// The encoding this consumer wants.
    var encoding: AudioEncoding { get }
    /// Called once before the first block.
    func prepare(format: StreamFormat) throws
    /// Receives one converted block on the converter's worker thread.
    func consume(_ block: EncodedBlock)
    /// Called once after the last block.
    func finish()
    /// Session events; see ``AudioConsumer/handle(_:)``.
    func handle(_ event: AudioSessionEvent)
}
