/// A shape the stream cannot give: a channel it does not have, a rate libsoxr refuses.
public struct BlockShapeError: Error, CustomStringConvertible, Sendable {
    /// One line: what was asked and why it cannot be given.
    public let description: String
    init(_ description: String) { self.description = description }
}
