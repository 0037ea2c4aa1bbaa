// Placeholder until the SDK lands.
import JackHost
