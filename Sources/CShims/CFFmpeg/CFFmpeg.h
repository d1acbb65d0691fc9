// Thin shim over FFmpeg 5.1 (Debian 12): includes plus wrappers for what Swift
// cannot import directly (function-like macros such as AVERROR, macro constants).
#ifndef CASTPREP_CFFMPEG_H
#define CASTPREP_CFFMPEG_H

#include <errno.h>
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/error.h>
#include <libavutil/pixdesc.h>
#include <libavutil/channel_layout.h>
#include <libswscale/swscale.h>

/// AV_NOPTS_VALUE is a macro with a cast Swift does not import.
static const int64_t castprep_AV_NOPTS_VALUE = AV_NOPTS_VALUE;

/// AVERROR(e) is a function-like macro; Swift needs a real function.
static inline int castprep_AVERROR(int errnum) { return AVERROR(errnum); }

/// AVERROR_EOF is built with FFERRTAG, another function-like macro.
static inline int castprep_AVERROR_EOF(void) { return AVERROR_EOF; }

#endif
