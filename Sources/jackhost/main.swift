import CJackhostStartup
import JackHostCLI

// The signal handlers are already in place: CJackhostStartup's constructor ran before this line.
_ = jackhost_startup_linked()
JackHostCommand.main()
