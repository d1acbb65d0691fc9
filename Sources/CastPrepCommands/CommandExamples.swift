import CommandParsing
import MediaProbe

// The EXAMPLES section of every command's help, kept apart from the specs so each list reads
// as a short tutorial. Every example must parse (CommandLineTests runs each one through the parser).

extension CastPrepCLI {
    static let examples: [CommandExample] = [
        CommandExample("Preflight the bundled demo catalog, then open preflight/report.html", "castprep preflight"),
        CommandExample("What FFmpeg finds in a file and which devices play it", "castprep probe movie.mp4"),
        CommandExample(
            "Fetch a stream as a receiver would and print the nginx configuration that fixes it",
            "castprep check https://cdn.example.com/hls/master.m3u8 --fix-config nginx"),
        CommandExample("Cast a file to a device by name", "castprep cast movie.mp4 --device \"Living Room TV\""),
        CommandExample(
            "Print the completion script for bash (zsh and fish too; see castprep completions --help)",
            "castprep completions bash"),
    ]
}

extension PreflightCommand {
    static let examples: [CommandExample] = [
        CommandExample("Preflight the bundled demo catalog into ./preflight", "castprep preflight"),
        CommandExample(
            "Judge a catalog on two devices only and fail on warnings too, as a CI gate",
            "castprep preflight catalog.json --devices chromecast-gen3,google-tv-4k --fail-on warning"),
        CommandExample(
            "Re-encode what a device cannot play, naming files by where they will be published",
            "castprep preflight catalog.json -o out --fix --base-url https://cdn.example.com/media/"),
        CommandExample(
            "Check the second of four shards (then castprep preflight merge the four folders)",
            "castprep preflight catalog.json --shard 2/4 -o shards/2"),
        CommandExample(
            "Take the shard from a Kubernetes Indexed Job, Slurm array or AWS Batch array job",
            "castprep preflight catalog.json --shard auto -o shards/$JOB_COMPLETION_INDEX"),
    ]

    static let mergeExamples: [CommandExample] = [
        CommandExample(
            "Merge the folders of castprep preflight catalog.json --shard K/4 -o shards/K (K = 1…4) into ./preflight",
            "castprep preflight merge preflight shards/1 shards/2 shards/3 shards/4"),
        CommandExample(
            "Merge every shard folder and fail on warnings too",
            "castprep preflight merge preflight shards/* --fail-on warning"),
    ]

    /// The device profile ids `--devices` takes, one per line with the device's name.
    static var deviceList: String {
        let width = (DeviceProfile.all.map(\.id.count).max() ?? 0) + 2
        return DeviceProfile.all.map { profile in
            "  " + profile.id + String(repeating: " ", count: width - profile.id.count) + profile.name
        }.joined(separator: "\n")
    }
}

extension LoadCommand {
    static let examples: [CommandExample] = [
        CommandExample(
            "One validated LOAD request per item, one per line", "castprep load Catalogs/demo.json --ndjson"),
        CommandExample(
            "One QUEUE_LOAD of the whole catalog with DASH sources, starting at the third item",
            "castprep load Catalogs/demo.json --queue --source dash --start 2"),
        CommandExample(
            "Check what it prints with the validator",
            "castprep load Catalogs/demo.json --queue --ndjson | castprep validate -"),
    ]
}

extension ValidateCommand {
    static let examples: [CommandExample] = [
        CommandExample("Check a LOAD request written by any sender", "castprep validate load.json"),
        CommandExample(
            "Check the queue preflight wrote, and its local files", "castprep validate preflight/queue.json"),
        CommandExample(
            "Check requests read from standard input", "castprep load Catalogs/demo.json --ndjson | castprep validate -"
        ),
    ]
}

extension CaptionsCommand {
    static let examples: [CommandExample] = [
        CommandExample("Convert an SRT file to movie.en.vtt beside it", "castprep captions convert movie.en.srt"),
        CommandExample("Check WebVTT files as a browser reads them", "castprep captions check movie.en.vtt"),
    ]

    static let convertExamples: [CommandExample] = [
        CommandExample("Convert an SRT file to movie.en.vtt beside it", "castprep captions convert movie.en.srt"),
        CommandExample(
            "Convert TTML shifted 2 seconds later, to standard output",
            "castprep captions convert subs.ttml --offset +2s -o -"),
        CommandExample(
            "Extract the text subtitle stream #2 of a Matroska file",
            "castprep captions convert movie.mkv --stream 2 -o movie.en.vtt"),
        CommandExample(
            "Fail instead of losing anything (styling, overlapping cues)",
            "castprep captions convert movie.fr.ass --strict"),
    ]

    static let checkExamples: [CommandExample] = [
        CommandExample("Check one WebVTT file", "castprep captions check movie.en.vtt"),
        CommandExample(
            "Check every track preflight wrote, printing only problems",
            "castprep captions check preflight/captions/*.vtt --quiet"),
    ]
}

extension ProbeCommand {
    static let examples: [CommandExample] = [
        CommandExample("Streams, Cast content type and each device's verdict with the fix", "castprep probe movie.mp4"),
        CommandExample("Judge two devices only", "castprep probe movie.mkv --devices chromecast-gen3,nest-hub"),
        CommandExample(
            "Probe a remote HLS ladder as JSON", "castprep probe https://cdn.example.com/hls/master.m3u8 --json"),
        CommandExample("Write a poster frame of each video into posters/", "castprep probe *.mp4 --poster posters"),
    ]
}

extension CheckCommand {
    static let examples: [CommandExample] = [
        CommandExample(
            "Walk an HLS stream as the receiver fetches it", "castprep check https://cdn.example.com/hls/master.m3u8"),
        CommandExample(
            "A progressive file with its caption track (CORS becomes required on both)",
            "castprep check https://cdn.example.com/movie.mp4 --track https://cdn.example.com/movie.en.vtt"),
        CommandExample(
            "Print the nginx configuration that fixes what was found",
            "castprep check https://cdn.example.com/hls/master.m3u8 --fix-config nginx"),
        CommandExample(
            "Every segment, as JSON", "castprep check https://cdn.example.com/hls/master.m3u8 --segments all --json"),
    ]
}

extension ServeCommand {
    static let examples: [CommandExample] = [
        CommandExample("Serve a folder to the Cast devices on the LAN", "castprep serve ~/Movies"),
        CommandExample(
            "Answer one device only, under a random secret path, with the URL that device reaches",
            "castprep serve media --device 192.168.1.20 --allow 192.168.1.20 --token"),
        CommandExample(
            "Serve on this machine only, for the emulated receiver",
            "castprep serve media --bind 127.0.0.1 --port 8000 --quiet"),
    ]
}

extension ReceiverCommand {
    static let examples: [CommandExample] = [
        CommandExample(
            "An emulated TV on this machine, for trying senders",
            "castprep receiver --name \"Test TV\" --bind 127.0.0.1 --no-mdns"),
        CommandExample(
            "Emulate a Nest Hub and log every message as JSON lines", "castprep receiver --profile nest-hub --log -"),
        CommandExample(
            "Misbehave as scripted (dropped links, refused launches, failed items)",
            "castprep receiver --faults faults.json"),
    ]
}

extension DevicesCommand {
    static let examples: [CommandExample] = [
        CommandExample("Every Cast device and group on the network", "castprep devices"),
        CommandExample("Ask a device on another subnet directly", "castprep devices --host 192.168.1.20"),
        CommandExample(
            "Remember the devices found and make one the default",
            "castprep devices --save --default \"Living Room TV\""),
        CommandExample("Give a device a short name", "castprep devices --alias tv=\"Living Room TV\""),
    ]
}

extension CastCommand {
    static let examples: [CommandExample] = [
        CommandExample(
            "Cast a local file (served to the device) and wait until it ends", "castprep cast movie.mp4 --wait"),
        CommandExample(
            "Cast what preflight wrote, leaving out the blocked items",
            "castprep cast preflight/queue.json --device \"Living Room TV\""),
        CommandExample(
            "A folder as one queue, from its third file, with English captions",
            "castprep cast Season1/ --start 2 --captions en"),
        CommandExample(
            "A stream to a device given by address",
            "castprep cast https://cdn.example.com/hls/master.m3u8 --host 192.168.1.20"),
    ]
}

extension ControlCommand {
    static let examples: [CommandExample] = [
        CommandExample("Pause what plays on the only device", "castprep control pause"),
        CommandExample("Go to 1 minute 30", "castprep control seek 1:30"),
        CommandExample("Set the volume to 40%", "castprep control volume 40 --device tv"),
        CommandExample("Turn captions off", "castprep control captions off"),
    ]
}

extension StatusCommand {
    static let examples: [CommandExample] = [
        CommandExample("What the device plays, in one line", "castprep status"),
        CommandExample("Follow it as JSON lines until Ctrl-C", "castprep status --watch --json --device tv"),
    ]
}

extension CompletionsCommand {
    static let examples: [CommandExample] = [
        CommandExample(
            "bash: install it where bash-completion looks for it",
            "castprep completions bash > ~/.local/share/bash-completion/completions/castprep"),
        CommandExample(
            "zsh: install it in a directory of $fpath (here ~/.zsh/completions) that compinit reads",
            "castprep completions zsh > ~/.zsh/completions/_castprep"),
        CommandExample(
            "fish: install it for every new shell",
            "castprep completions fish > ~/.config/fish/completions/castprep.fish"),
    ]
}

extension IOSCommand {
    static let checkExamples: [CommandExample] = [
        CommandExample(
            "Check an app's project folder: its Info.plist files, Cast SDK version and discovery code",
            "castprep ios check MyApp/"),
        CommandExample(
            "Add what an Info.plist lacks for the Default Media Receiver (the original is kept as .orig)",
            "castprep ios check MyApp/MyApp/Info.plist --app-id CC1AD845 --fix"),
        CommandExample(
            "Check a built app bundle and print the findings as JSON", "castprep ios check build/MyApp.app --json"),
    ]
}
