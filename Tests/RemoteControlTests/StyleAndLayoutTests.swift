import CastModel
import JSONSupport
import RemoteControl
import Testing

@Suite("remote: style files")
struct StyleFileTests {
    @Test("a widget inherits from its groups and overrides what it sets")
    func inheritance() throws {
        let sheet = try RemoteStyleSheet.parse(
            Array(
                """
                {"castViews": {"bodyTextColor": "#d0d0d0", "backgroundColor": "16", "headingTextColor": "white",
                  "mediaControl": {"headingTextColor": "#ffaf00",
                    "miniController": {"bodyTextColor": "cyan"}},
                  "deviceControl": {"noDevicesAvailableController": {"headingTextColor": "red"}}}}
                """.utf8), path: "style.json")
        let mini = sheet.resolved(.miniController)
        #expect(mini.bodyTextColor == .palette(6))  // its own
        #expect(mini.headingTextColor == .rgb(255, 175, 0))  // mediaControl's
        #expect(mini.backgroundColor == .palette(16))  // castViews'
        let expanded = sheet.resolved(.expandedController)
        #expect(expanded.bodyTextColor == .rgb(208, 208, 208))
        #expect(expanded.headingTextColor == .rgb(255, 175, 0))
        #expect(sheet.resolved(.deviceChooser).headingTextColor == .palette(7))
        #expect(sheet.resolved(.noDevicesAvailableController).headingTextColor == .palette(1))
        #expect(sheet.resolved(.instructions).iconTintColor == nil)
    }

    @Test("a user's file goes over the built-in look, attribute by attribute")
    func overlay() throws {
        let user = try RemoteStyleSheet.parse(
            Array(##"{"castViews": {"bodyTextColor": "#101010"}}"##.utf8), path: "s.json")
        let merged = RemoteStyleSheet.standard.overlaid(with: user)
        #expect(merged.resolved(.expandedController).bodyTextColor == .rgb(16, 16, 16))
        #expect(
            merged.resolved(.expandedController).buttonTextColor
                == RemoteStyleSheet.standard.resolved(.expandedController).buttonTextColor)
    }

    @Test(
        "hierarchy paths follow the Cast SDK",
        arguments: [
            (StyleNode.miniController, [StyleNode.castViews, .mediaControl, .miniController]),
            (.noDevicesAvailableController, [.castViews, .deviceControl, .noDevicesAvailableController]),
            (.instructions, [.castViews, .instructions]),
            (.castViews, [.castViews]),
        ])
    func lineage(node: StyleNode, expected: [StyleNode]) {
        #expect(node.lineage == expected)
    }

    @Test(
        "bad style files fail with code, file, line:column and a fix",
        arguments: [
            (
                ##"{"castViews": {"bodyTextColour": "#fff"}}"##, "remote.unknown-member", 1, 34,
                "did you mean 'bodyTextColor'?"
            ),
            (#"{"castViews": {"miniController": {}}}"#, "remote.unknown-member", 1, 34, "move it into its group"),
            ("{\"castViews\": {\n  \"bodyTextColor\": \"#12345\"}}", "remote.bad-color", 2, 20, "#rrggbb"),
            (#"{"castViews": {"bodyTextColor": 12}}"#, "remote.bad-color", 1, 33, "palette index"),
            (#"{"castviews": {}}"#, "remote.unknown-member", 1, 15, "did you mean 'castViews'?"),
            (#"["castViews"]"#, "remote.wrong-type", nil, nil, "castViews"),
            (#"{"castViews": {"#, "remote.file-not-json", nil, nil, ""),
        ] as [(String, String, Int?, Int?, String)])
    func badFiles(text: String, code: String, line: Int?, column: Int?, fixPart: String) {
        #expect {
            _ = try RemoteStyleSheet.parse(Array(text.utf8), path: "colors.json")
        } throws: { error in
            guard let error = error as? RemoteFileError else { return false }
            let diagnostic = error.diagnostic
            let placed = line == nil || (diagnostic.location?.line == line && diagnostic.location?.column == column)
            return diagnostic.code.rawValue == code && diagnostic.location?.file == "colors.json" && placed
                && (fixPart.isEmpty || (diagnostic.fix ?? "").contains(fixPart))
        }
    }

    @Test("a file over 64 KiB is refused before parsing")
    func tooLarge() {
        let bytes =
            Array(#"{"castViews": {}}"#.utf8) + Array(repeating: UInt8(ascii: " "), count: RemoteFiles.maximumBytes)
        #expect {
            _ = try RemoteStyleSheet.parse(bytes, path: "big.json")
        } throws: { error in
            (error as? RemoteFileError)?.diagnostic.code.rawValue == "remote.file-too-large"
        }
    }

    @Test(
        "colours: hex, palette index and names",
        arguments: [
            ("#ff8800", TerminalColor.rgb(255, 136, 0)), ("#FFF", .rgb(255, 255, 255)), ("214", .palette(214)),
            ("Cyan", .palette(6)),
            ("bright-red", .palette(9)),
        ])
    func colors(text: String, expected: TerminalColor) {
        #expect(TerminalColor(parsing: text) == expected)
    }

    @Test("not colours", arguments: ["#ff88", "256", "-1", "chartreuse", "#gggggg", ""])
    func notColors(text: String) {
        #expect(TerminalColor(parsing: text) == nil)
    }

    @Test(
        "24-bit colours map to the nearest of the 256",
        arguments: [
            (TerminalColor.rgb(255, 175, 0), UInt8(214)), (.rgb(0, 0, 0), 16), (.rgb(255, 255, 255), 231),
            (.rgb(128, 128, 128), 244),
            (.rgb(208, 208, 208), 252), (.palette(3), 3),
        ])
    func paletteMapping(color: TerminalColor, index: UInt8) {
        #expect(color.paletteIndex == index)
    }

    @Test(
        "colour depth from the environment",
        arguments: [
            (["TERM": "xterm-256color"], ColorDepth.palette256),
            (["TERM": "xterm-256color", "COLORTERM": "truecolor"], .truecolor),
            (["TERM": "screen", "COLORTERM": "24bit"], .truecolor),
            (["TERM": "xterm-256color", "NO_COLOR": "1"], .monochrome),
            (["TERM": "xterm-256color", "NO_COLOR": ""], .palette256), (["TERM": "dumb"], .monochrome),
            ([:], .monochrome),
        ])
    func depth(environment: [String: String], expected: ColorDepth) {
        #expect(ColorDepth.detect(environment: environment) == expected)
    }

    @Test("SGR parameters per depth")
    func sgr() {
        let style = CellStyle(foreground: .rgb(255, 175, 0), background: .palette(16), bold: true)
        #expect(style.sgrParameters(depth: .truecolor) == ["1", "38;2;255;175;0", "48;5;16"])
        #expect(style.sgrParameters(depth: .palette256) == ["1", "38;5;214", "48;5;16"])
        #expect(style.sgrParameters(depth: .monochrome) == ["1"])
    }
}

@Suite("remote: layout files")
struct LayoutFileTests {
    @Test("slots, framework buttons and custom buttons")
    func parses() throws {
        let layout = try RemoteLayout.parse(
            Array(
                #"""
                {"expanded": ["rewind30Seconds", "muteToggle", "closedCaptions", {"type": "custom", "key": "L", "label": "like",
                   "namespace": "urn:x-cast:com.example.like", "message": {"like": true}}],
                 "mini": ["stop", {"type": "custom", "key": "o", "label": "notify", "command": "echo hi"}]}
                """#.utf8), path: "layout.json")
        #expect(layout.expanded.count == 4)
        #expect(layout.expanded[0] == .rewind30Seconds)
        #expect(
            layout.expanded[3]
                == .custom(
                    CustomButton(
                        key: "L", label: "like",
                        action: .message(
                            namespace: "urn:x-cast:com.example.like",
                            payload: ["like": true]))))
        #expect(
            layout.mini == [
                .stop, .custom(CustomButton(key: "o", label: "notify", action: .command("echo hi"))), .none,
            ])
        #expect(Set(layout.customButtons.keys) == ["L", "o"])
    }

    @Test("a controller the file leaves out keeps the standard slots")
    func defaults() throws {
        let layout = try RemoteLayout.parse(Array(#"{"mini": ["none"]}"#.utf8), path: "l.json")
        #expect(layout.expanded == RemoteLayout.standard.expanded)
        #expect(layout.mini == [.none, .none, .none])
    }

    @Test(
        "bad layout files fail with code, place and fix",
        arguments: [
            (
                #"{"expanded": ["skipNext", "skipNext", "none", "none", "stop"]}"#, "remote.too-many-slots",
                "$.expanded", "keep 4 buttons"
            ),
            (#"{"mini": ["skipNxt"]}"#, "remote.unknown-button", "$.mini[0]", "did you mean 'skipNext'?"),
            (#"{"mini": ["custom"]}"#, "remote.unknown-button", "$.mini[0]", #""type": "custom""#),
            (
                #"{"mini": [{"type": "custom", "key": "q", "command": "x"}]}"#, "remote.bad-key", "$.mini[0].key",
                "choose a key outside"
            ),
            (
                #"{"mini": [{"type": "custom", "key": "ab", "command": "x"}]}"#, "remote.bad-key", "$.mini[0].key",
                #""key": "l""#
            ),
            (
                #"{"mini": [{"type": "custom", "key": "L", "command": "x"}], "expanded": [{"type": "custom", "key": "L", "command": "y"}]}"#,
                "remote.bad-key", "$.mini[0].key", "its own key"
            ),
            (
                #"{"mini": [{"type": "custom", "key": "L", "command": "x", "namespace": "urn:x-cast:a", "message": 1}]}"#,
                "remote.bad-custom-button", "$.mini[0]", "— or"
            ),
            (
                #"{"mini": [{"type": "custom", "key": "L", "namespace": "urn:x-cast:com.google.cast.media", "message": {}}]}"#,
                "remote.bad-custom-button", "$.mini[0].namespace", "platform"
            ),
            (
                #"{"mini": [{"type": "custom", "key": "L", "comand": "x"}]}"#, "remote.unknown-member",
                "$.mini[0].comand", "did you mean 'command'?"
            ),
            (#"{"expand": []}"#, "remote.unknown-member", "$.expand", "did you mean 'expanded'?"),
            (#"{"mini": "stop"}"#, "remote.wrong-type", "$.mini", "playPauseToggle"),
        ])
    func badFiles(text: String, code: String, path: String, fixPart: String) {
        #expect {
            _ = try RemoteLayout.parse(Array(text.utf8), path: "buttons.json")
        } throws: { error in
            guard let error = error as? RemoteFileError else { return false }
            let diagnostic = error.diagnostic
            return diagnostic.code.rawValue == code && diagnostic.path?.description == path
                && diagnostic.location?.file == "buttons.json"
                && diagnostic.location?.line == 1 && (diagnostic.fix ?? "").contains(fixPart)
        }
    }
}
