import CastPrepCommands
import CommandParsing
import Foundation

// The whole program: parse, run, exit with the command's status (0 ok, 1 failure, 64 usage).
let status = await CastPrepCLI.run(arguments: Array(CommandLine.arguments.dropFirst()), io: CommandIO.standard())
exit(status)
