import JackHostCLI

JackHostCommand.main()
