import JackHostPluginSDK

/// The plugin's one exported C symbol: jackhost finds it with dlsym and reads the descriptor.
@c(jackhost_plugin_descriptor)
public func jackhostPluginDescriptor() -> UnsafeRawPointer { exportPlugin(LoudnessMeter.self) }
