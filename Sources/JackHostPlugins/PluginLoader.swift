// Placeholder until the loader lands.
import JackHost
