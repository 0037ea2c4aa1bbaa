import JackHostCLI
JackHostCommand.main()
