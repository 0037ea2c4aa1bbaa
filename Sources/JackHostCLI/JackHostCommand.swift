public enum JackHostCommand { public static func main() {} }
