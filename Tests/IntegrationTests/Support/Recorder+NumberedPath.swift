import JackHostConsumers

extension Recorder {
    static func numberedPathForTests(_ path: String, _ index: Int) -> String { numberedPath(path, index: index) }
}
