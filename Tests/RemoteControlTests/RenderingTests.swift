import CastModel
import JSONSupport
import RemoteControl
import Testing
import TestSupport
import Foundation

@Suite("remote: screens")
struct RenderingTests {
    @Test("expanded controller, 80×24")
    func expanded() {
        let controller = RemoteController(snapshot: Fixtures.snapshot())
        Snapshot.assertMatches(controller.render(width: 80, height: 24, now: 102).text + "\n", named: "expanded.txt")
    }

    @Test("expanded controller with the track selector open")
    func trackSelector() {
        var controller = RemoteController(snapshot: Fixtures.snapshot())
        _ = controller.handle(.character("t"), now: 100)
        _ = controller.handle(.down, now: 100)
        Snapshot.assertMatches(controller.render(width: 80, height: 24, now: 100).text + "\n", named: "tracks.txt")
    }

    @Test("expanded controller with the queue open")
    func queue() {
        var controller = RemoteController(snapshot: Fixtures.snapshot(playerState: .paused, muted: true))
        _ = controller.handle(.character("l"), now: 100)
        Snapshot.assertMatches(controller.render(width: 80, height: 24, now: 100).text + "\n", named: "queue.txt")
    }

    @Test("the introductory overlay")
    func introduction() {
        let controller = RemoteController(snapshot: Fixtures.snapshot(), showsIntroduction: true)
        Snapshot.assertMatches(
            controller.render(width: 80, height: 24, now: 100).text + "\n", named: "introduction.txt")
    }

    @Test("a custom layout's buttons and keys on the bar", arguments: [RemoteController.Presentation.expanded, .mini])
    func customLayout(presentation: RemoteController.Presentation) throws {
        let layout = try RemoteLayout.parse(
            Array(
                #"""
                {"expanded": ["stop", "muteToggle", "closedCaptions", {"type": "custom", "key": "L", "label": "like", "namespace": "urn:x-cast:com.example.like", "message": {}}],
                 "mini": ["skipNext", {"type": "custom", "key": "L", "label": "like", "namespace": "urn:x-cast:com.example.like", "message": {}}]}
                """#.utf8), path: "layout.json")
        let controller = RemoteController(snapshot: Fixtures.snapshot(), layout: layout, presentation: presentation)
        let name = presentation == .mini ? "layout-mini.txt" : "layout-expanded.txt"
        Snapshot.assertMatches(controller.render(width: 80, height: 24, now: 100).text + "\n", named: name)
    }

    @Test("mini controller at three widths", arguments: [100, 60, 30])
    func mini(width: Int) {
        let controller = RemoteController(snapshot: Fixtures.snapshot(), presentation: .mini)
        Snapshot.assertMatches(
            controller.render(width: width, height: 1, now: 102).text + "\n", named: "mini-\(width).txt")
    }

    @Test("nothing loaded, and a dropped link")
    func idleAndReconnecting() {
        let idle = RemoteController(snapshot: RemoteSnapshot(device: "127.0.0.1:8009", link: .reconnecting(attempt: 3)))
        Snapshot.assertMatches(idle.render(width: 60, height: 14, now: 0).text + "\n", named: "reconnecting.txt")
    }

    @Test("the device chooser and the no-devices screen")
    func chooser() {
        let entries = DeviceChooser.ordered([
            DeviceChooser.Entry(
                name: "Whole house", model: "Google Cast Group", address: "10.0.0.9:32187", isGroup: true,
                isDefault: false),
            DeviceChooser.Entry(
                name: "Living Room TV", model: "Chromecast", address: "10.0.0.4:8009", isGroup: false, isDefault: true),
            DeviceChooser.Entry(
                name: "Kitchen", model: "Google Home", address: "10.0.0.5:8009", isGroup: false, isDefault: false),
        ])
        let choosing = DeviceChooser(phase: .choosing(entries, selection: 1))
        Snapshot.assertMatches(choosing.render(width: 70, height: 10).text + "\n", named: "chooser.txt")
        let none = DeviceChooser(
            phase: .noDevices(
                message: "no Cast device answered on eth0 in 3.0 s. Check the points below.",
                advice: [
                    "Is the device on the same network and subnet as this computer? Guest Wi-Fi and client isolation keep devices apart.",
                    "A firewall may drop multicast: allow UDP 5353 in and out.",
                ]))
        Snapshot.assertMatches(none.render(width: 70, height: 14).text + "\n", named: "no-devices.txt")
    }

    @Test("a style file's colours reach the escape sequences, by depth", arguments: ColorDepth.allCases)
    func styledOutput(depth: ColorDepth) throws {
        let sheet = RemoteStyleSheet.standard.overlaid(
            with: try RemoteStyleSheet.parse(
                Array(
                    """
                    {"castViews": {"backgroundColor": "#000000", "mediaControl": {"miniController": {"bodyTextColor": "#ffaf00", "buttonTextColor": "39"}}}}
                    """.utf8), path: "style.json"))
        var snapshot = Fixtures.snapshot()
        let current = snapshot.currentMedia
        snapshot.media?.items = nil
        snapshot.media?.media = current
        let controller = RemoteController(snapshot: snapshot, style: sheet, depth: depth, presentation: .mini)
        let renderer = TerminalRenderer(depth: depth)
        let escaped = renderer.line(controller.render(width: 72, height: 1, now: 100)).replacingOccurrences(
            of: "\u{1B}", with: "\\e")
        Snapshot.assertMatches(escaped + "\n", named: "styled-\(depth.rawValue).txt")
    }
}

@Suite("remote: frame diffs")
struct RendererTests {
    @Test("the first frame is drawn whole, later frames only where cells changed")
    func diff() {
        var renderer = TerminalRenderer(depth: .monochrome)
        var screen = Screen(width: 10, height: 3)
        screen.put("hello", row: 0, column: 0)
        screen.put("world", row: 2, column: 0)
        let first = renderer.frame(screen)
        #expect(first.hasPrefix("\u{1B}[0m\u{1B}[H\u{1B}[2J"))
        #expect(first.contains("hello") && first.contains("world"))
        var next = screen
        next.put("W", row: 2, column: 0)
        next.put("!", row: 2, column: 5)
        #expect(renderer.frame(next) == "\u{1B}[3;1H\u{1B}[0mWorld!\u{1B}[0m")
        #expect(renderer.frame(next) == "\u{1B}[0m")  // nothing changed
        renderer.invalidate()
        #expect(renderer.frame(next).hasPrefix("\u{1B}[0m\u{1B}[H\u{1B}[2J"))
    }

    @Test("a different size redraws everything")
    func resize() {
        var renderer = TerminalRenderer(depth: .monochrome)
        _ = renderer.frame(Screen(width: 10, height: 3))
        #expect(renderer.frame(Screen(width: 12, height: 3)).contains("\u{1B}[2J"))
    }

    @Test("text is cut at the edge; wide characters take two cells; control characters become spaces")
    func put() {
        var screen = Screen(width: 8, height: 1)
        screen.put("日本語abc\u{7}", row: 0, column: 0)
        #expect(screen.text == "日本語ab")
        var other = Screen(width: 8, height: 1)
        other.put("a\u{1B}[2Jb", row: 0, column: 0)
        #expect(other.text == "a [2Jb")
        #expect(Screen.truncate("Big Buck Bunny", to: 8) == "Big Buc…")
    }

    @Test("screen sizes are bounded")
    func bounded() {
        let screen = Screen(width: 100_000, height: -5)
        #expect(screen.width == Screen.maximumSide)
        #expect(screen.height == 1)
    }
}
