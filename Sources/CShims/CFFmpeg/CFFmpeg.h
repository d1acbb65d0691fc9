// Thin shim over FFmpeg 5.1 (Debian 12): includes, wrappers for what Swift cannot import
// directly (function-like macros such as AVERROR, macro constants), and run-time loading.
//
// Why FFmpeg is loaded at run time: linking libavformat pulls in about 130 shared libraries
// (every codec, TLS, X11, fontconfig...), which Debian builds with immediate binding. Loading
// and relocating them took about 50 ms of CPU on every castprep start, also for the commands
// that never touch media (load, validate, captions convert of a caption file). Instead, the
// functions CastPrep calls are resolved with dlopen/dlsym the first time one is needed, from
// the sonames of the headers this was compiled against (libavformat.so.<LIBAVFORMAT_VERSION_MAJOR>
// and so on), so a newer FFmpeg is picked up by rebuilding, exactly as with linking.
//
// Swift calls castprep_<name>() instead of <name>(); each wrapper forwards to the resolved
// function with the header's own prototype (the table's entries are declared with
// __typeof__ of the real declaration, so a wrong wrapper does not compile). Callers check
// castprep_ffmpeg_load_error() first and turn a missing library into their own error; a
// wrapper reached without that check stops the process with the same message instead of
// calling through a null pointer.
#ifndef CASTPREP_CFFMPEG_H
#define CASTPREP_CFFMPEG_H

#if !__has_include(<libavformat/avformat.h>)
#error "FFmpeg development headers not found; install them: apt-get install libavformat-dev libavcodec-dev libavutil-dev libswscale-dev"
#endif

#include "../LibraryLoading/castprep_library.h"
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/error.h>
#include <libavutil/pixdesc.h>
#include <libavutil/channel_layout.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>

/// AV_NOPTS_VALUE is a macro with a cast Swift does not import.
static const int64_t castprep_AV_NOPTS_VALUE = AV_NOPTS_VALUE;

/// AVERROR(e) is a function-like macro; Swift needs a real function.
static inline int castprep_AVERROR(int errnum) { return AVERROR(errnum); }

/// AVERROR_EOF is built with FFERRTAG, another function-like macro.
static inline int castprep_AVERROR_EOF(void) { return AVERROR_EOF; }

/// AVERROR_EXIT ("immediate exit was requested"), also an FFERRTAG.
static inline int castprep_AVERROR_EXIT(void) { return AVERROR_EXIT; }

// The libraries, in dependency order, and their sonames.
#if defined(__APPLE__)
#define CASTPREP_FFMPEG_SONAME(name, major) "lib" #name "." AV_STRINGIFY(major) ".dylib"
#else
#define CASTPREP_FFMPEG_SONAME(name, major) "lib" #name ".so." AV_STRINGIFY(major)
#endif
#define CASTPREP_FFMPEG_LIBRARIES(X)                          \
    X(avutil, LIBAVUTIL_VERSION_MAJOR)                       \
    X(swscale, LIBSWSCALE_VERSION_MAJOR)                     \
    X(avcodec, LIBAVCODEC_VERSION_MAJOR)                     \
    X(avformat, LIBAVFORMAT_VERSION_MAJOR)

// Every FFmpeg function CastPrep calls: library, return type, name, parameters, arguments.
// CASTPREP_FFMPEG_VOID lists the ones returning void.
#define CASTPREP_FFMPEG_FUNCTIONS(X)                                                                              \
    X(avformat, unsigned, avformat_version, (void), ())                                                           \
    X(avformat, AVFormatContext *, avformat_alloc_context, (void), ())                                            \
    X(avformat, int, avformat_open_input,                                                                         \
      (AVFormatContext **ps, const char *url, const AVInputFormat *fmt, AVDictionary **options),                 \
      (ps, url, fmt, options))                                                                                    \
    X(avformat, int, avformat_find_stream_info, (AVFormatContext *ic, AVDictionary **options), (ic, options))    \
    X(avformat, int, av_find_best_stream,                                                                         \
      (AVFormatContext *ic, enum AVMediaType type, int wanted_stream_nb, int related_stream,                      \
       const AVCodec **decoder_ret, int flags),                                                                   \
      (ic, type, wanted_stream_nb, related_stream, decoder_ret, flags))                                           \
    X(avformat, int, av_read_frame, (AVFormatContext *s, AVPacket *pkt), (s, pkt))                                \
    X(avformat, int, av_seek_frame, (AVFormatContext *s, int stream_index, int64_t timestamp, int flags),        \
      (s, stream_index, timestamp, flags))                                                                        \
    X(avformat, uint8_t *, av_stream_get_side_data,                                                               \
      (const AVStream *stream, enum AVPacketSideDataType type, size_t *size), (stream, type, size))               \
    X(avformat, int, avio_open2,                                                                                  \
      (AVIOContext **s, const char *url, int flags, const AVIOInterruptCB *int_cb, AVDictionary **options),      \
      (s, url, flags, int_cb, options))                                                                           \
    X(avformat, int, avio_read, (AVIOContext *s, unsigned char *buf, int size), (s, buf, size))                  \
    X(avformat, int, avio_closep, (AVIOContext **s), (s))                                                         \
    X(avformat, int64_t, avio_size, (AVIOContext *s), (s))                                                        \
    X(avformat, int64_t, avio_seek, (AVIOContext *s, int64_t offset, int whence), (s, offset, whence))           \
    X(avcodec, unsigned, avcodec_version, (void), ())                                                             \
    X(avcodec, AVCodecContext *, avcodec_alloc_context3, (const AVCodec *codec), (codec))                         \
    X(avcodec, int, avcodec_open2, (AVCodecContext *avctx, const AVCodec *codec, AVDictionary **options),        \
      (avctx, codec, options))                                                                                    \
    X(avcodec, int, avcodec_parameters_to_context, (AVCodecContext *codec, const AVCodecParameters *par),        \
      (codec, par))                                                                                               \
    X(avcodec, const char *, avcodec_get_name, (enum AVCodecID id), (id))                                         \
    X(avcodec, const char *, avcodec_profile_name, (enum AVCodecID codec_id, int profile), (codec_id, profile))  \
    X(avcodec, const AVCodecDescriptor *, avcodec_descriptor_get, (enum AVCodecID id), (id))                      \
    X(avcodec, const AVCodec *, avcodec_find_decoder, (enum AVCodecID id), (id))                                  \
    X(avcodec, const AVCodec *, avcodec_find_encoder, (enum AVCodecID id), (id))                                  \
    X(avcodec, int, avcodec_send_packet, (AVCodecContext *avctx, const AVPacket *avpkt), (avctx, avpkt))          \
    X(avcodec, int, avcodec_receive_frame, (AVCodecContext *avctx, AVFrame *frame), (avctx, frame))               \
    X(avcodec, int, avcodec_send_frame, (AVCodecContext *avctx, const AVFrame *frame), (avctx, frame))            \
    X(avcodec, int, avcodec_receive_packet, (AVCodecContext *avctx, AVPacket *avpkt), (avctx, avpkt))             \
    X(avcodec, int, avcodec_decode_subtitle2,                                                                     \
      (AVCodecContext *avctx, AVSubtitle *sub, int *got_sub_ptr, AVPacket *avpkt), (avctx, sub, got_sub_ptr, avpkt)) \
    X(avcodec, AVPacket *, av_packet_alloc, (void), ())                                                           \
    X(avutil, int, av_dict_set, (AVDictionary **pm, const char *key, const char *value, int flags),              \
      (pm, key, value, flags))                                                                                    \
    X(avutil, AVDictionaryEntry *, av_dict_get,                                                                   \
      (const AVDictionary *m, const char *key, const AVDictionaryEntry *prev, int flags), (m, key, prev, flags))  \
    X(avutil, int, av_strerror, (int errnum, char *errbuf, size_t errbuf_size), (errnum, errbuf, errbuf_size))    \
    X(avutil, int, av_opt_get, (void *obj, const char *name, int search_flags, uint8_t **out_val),              \
      (obj, name, search_flags, out_val))                                                                         \
    X(avutil, AVFrame *, av_frame_alloc, (void), ())                                                              \
    X(avutil, int, av_frame_get_buffer, (AVFrame *frame, int align), (frame, align))                              \
    X(avutil, const AVPixFmtDescriptor *, av_pix_fmt_desc_get, (enum AVPixelFormat pix_fmt), (pix_fmt))           \
    X(avutil, int, av_channel_layout_describe,                                                                    \
      (const AVChannelLayout *channel_layout, char *buf, size_t buf_size), (channel_layout, buf, buf_size))       \
    X(swscale, struct SwsContext *, sws_getContext,                                                               \
      (int srcW, int srcH, enum AVPixelFormat srcFormat, int dstW, int dstH, enum AVPixelFormat dstFormat,        \
       int flags, SwsFilter *srcFilter, SwsFilter *dstFilter, const double *param),                               \
      (srcW, srcH, srcFormat, dstW, dstH, dstFormat, flags, srcFilter, dstFilter, param))                         \
    X(swscale, int, sws_scale,                                                                                    \
      (struct SwsContext *c, const uint8_t *const srcSlice[], const int srcStride[], int srcSliceY,              \
       int srcSliceH, uint8_t *const dst[], const int dstStride[]),                                               \
      (c, srcSlice, srcStride, srcSliceY, srcSliceH, dst, dstStride))

#define CASTPREP_FFMPEG_VOID(X)                                                   \
    X(avformat, avformat_close_input, (AVFormatContext **s), (s))                 \
    X(avcodec, avcodec_free_context, (AVCodecContext **avctx), (avctx))           \
    X(avcodec, avsubtitle_free, (AVSubtitle *sub), (sub))                         \
    X(avcodec, av_packet_free, (AVPacket **pkt), (pkt))                           \
    X(avcodec, av_packet_unref, (AVPacket *pkt), (pkt))                           \
    X(avutil, av_log_set_level, (int level), (level))                             \
    X(avutil, av_dict_free, (AVDictionary **m), (m))                              \
    X(avutil, av_free, (void *ptr), (ptr))                                        \
    X(avutil, av_frame_free, (AVFrame **frame), (frame))                          \
    X(swscale, sws_freeContext, (struct SwsContext *swsContext), (swsContext))

/// The resolved functions, or the reason they could not be resolved.
typedef struct castprep_ffmpeg_api {
    /// Whether loading worked, and if not why (see castprep_library.h).
    castprep_library_status status;
#define CASTPREP_FFMPEG_FIELD(library, result, name, parameters, arguments) __typeof__(name) *name;
#define CASTPREP_FFMPEG_VOID_FIELD(library, name, parameters, arguments) __typeof__(name) *name;
    CASTPREP_FFMPEG_FUNCTIONS(CASTPREP_FFMPEG_FIELD)
    CASTPREP_FFMPEG_VOID(CASTPREP_FFMPEG_VOID_FIELD)
#undef CASTPREP_FFMPEG_FIELD
#undef CASTPREP_FFMPEG_VOID_FIELD
} castprep_ffmpeg_api;

/// Opens FFmpeg's libraries and resolves every function of the table (see castprep_library.h).
static inline void castprep_ffmpeg_resolve(castprep_ffmpeg_api *api) {
#define CASTPREP_FFMPEG_OPEN(name, major)                                                                          \
    void *handle_##name = castprep_library_open(&api->status, "FFmpeg's " CASTPREP_FFMPEG_SONAME(name, major), CASTPREP_FFMPEG_SONAME(name, major));     \
    if (handle_##name == NULL) return;
    CASTPREP_FFMPEG_LIBRARIES(CASTPREP_FFMPEG_OPEN)
#undef CASTPREP_FFMPEG_OPEN
#define CASTPREP_FFMPEG_RESOLVE(library, result, name, parameters, arguments)                                      \
    CASTPREP_LIBRARY_RESOLVE(api, handle_##library, "FFmpeg's lib" #library, name)
#define CASTPREP_FFMPEG_RESOLVE_VOID(library, name, parameters, arguments)                                         \
    CASTPREP_LIBRARY_RESOLVE(api, handle_##library, "FFmpeg's lib" #library, name)
    CASTPREP_FFMPEG_FUNCTIONS(CASTPREP_FFMPEG_RESOLVE)
    CASTPREP_FFMPEG_VOID(CASTPREP_FFMPEG_RESOLVE_VOID)
#undef CASTPREP_FFMPEG_RESOLVE
#undef CASTPREP_FFMPEG_RESOLVE_VOID
}

CASTPREP_LIBRARY_ACCESSORS(ffmpeg, castprep_ffmpeg_api, castprep_ffmpeg_resolve,
                           "install FFmpeg's shared libraries (Debian: libavformat" AV_STRINGIFY(
                               LIBAVFORMAT_VERSION_MAJOR) ")")

#define CASTPREP_FFMPEG_WRAPPER(library, result, name, parameters, arguments)                                       \
    static inline result castprep_##name parameters { return castprep_ffmpeg_checked()->name arguments; }
#define CASTPREP_FFMPEG_VOID_WRAPPER(library, name, parameters, arguments)                                         \
    static inline void castprep_##name parameters { castprep_ffmpeg_checked()->name arguments; }
CASTPREP_FFMPEG_FUNCTIONS(CASTPREP_FFMPEG_WRAPPER)
CASTPREP_FFMPEG_VOID(CASTPREP_FFMPEG_VOID_WRAPPER)
#undef CASTPREP_FFMPEG_WRAPPER
#undef CASTPREP_FFMPEG_VOID_WRAPPER

#endif
