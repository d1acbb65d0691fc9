public import CastModel
public import CastSender

extension PlaybackSummary {
    /// Reads the summary from a sender's merged state.
    public init(state: CastSenderState, device: String) {
        self.init(
            device: device, app: state.session?.displayName ?? state.session?.appID, media: state.media,
            volume: state.deviceVolume)
    }
}
