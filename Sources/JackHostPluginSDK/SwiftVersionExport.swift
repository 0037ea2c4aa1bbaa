import JackHostTypes

/// The Swift compiler version this plugin was built with, exported as the C symbol
/// `const char *jackhost_plugin_swift_version(void)` of every Swift plugin (the SDK is compiled
/// into the plugin, by the plugin's compiler). jackhost compares it with its own before it reads
/// the descriptor, and refuses a plugin built by another compiler version: Swift has no stable ABI
/// on Linux, and a Swift plugin shares jackhost's runtime. C plugins do not export it and are not
/// checked. `plugin inspect` shows it.
///
/// Building with `-Xswiftc -DJACKHOST_PLUGIN_SWIFT_VERSION_MISMATCH_TEST` records "0.0.0-test"
/// instead, to try the refusal.
@c(jackhost_plugin_swift_version)
public func jackhostPluginSwiftVersion() -> UnsafePointer<CChar> {
    #if JACKHOST_PLUGIN_SWIFT_VERSION_MISMATCH_TEST
        let version: StaticString = "0.0.0-test"
    #else
        let version = SwiftCompiler.version
    #endif
    // A static string literal is NUL-terminated in the image's read-only data.
    return UnsafeRawPointer(version.utf8Start).assumingMemoryBound(to: CChar.self)
}
