public import CommandParsing
import JSONSupport

/// The `castprep` command line: the command tree, and the entry point tests call in-process.
///
/// Commands are thin: they parse options, call the library modules, and print. Each lives
/// in its own file as a `CommandSpec` plus a run function.
public enum CastPrepCLI {
    /// The version printed by `castprep --version` and written into JSON documents.
    public static let version = JSONEnvelope.toolkitVersion

    /// The version of the `--json` documents' layout; bumped on incompatible changes.
    public static let jsonFormatVersion = JSONEnvelope.format

    /// The root command.
    public static var root: CommandSpec {
        CommandSpec(
            name: "castprep",
            abstract: "Make a media library castable, then cast it.",
            discussion: """
                CastPrep reads media catalogs (Google's CastVideos f.json, its own JSON format, M3U playlists), \
                builds the Cast LOAD and QUEUE_LOAD requests a Chromecast needs, and checks them for everything a \
                receiver would reject or silently ignore. It converts captions of any format to correct WebVTT.
                """,
            version: version,
            subcommands: [
                PreflightCommand.spec, LoadCommand.spec, ValidateCommand.spec, CaptionsCommand.spec, ProbeCommand.spec,
                CheckCommand.spec.withLogging,
                ServeCommand.spec,
                IOSCommand.spec,
                ReceiverCommand.spec.withLogging,
                DevicesCommand.spec.withLogging, CastCommand.spec.withLogging, ControlCommand.spec.withLogging,
                StatusCommand.spec.withLogging,
                NowPlayingCommand.spec, RemoteCommand.spec.withLogging,
                CompletionsCommand.spec,
            ],
            examples: examples)
    }

    /// Runs `castprep` with `arguments` (without the program name) and returns the exit status:
    /// 0 success, 1 failure or failed check, 64 usage error.
    public static func run(arguments: [String], io: CommandIO) async -> Int32 {
        await CommandRunner.run(root, arguments: arguments, io: io)
    }
}
