"""Images for the auxiliary vision model: type sniffing, downscaling to a cap (with Pillow, from the
browser/vision extras; without it an image over the byte cap is refused, never sent whole), data URLs
and the call itself (`ctx.vision`, wired by bootstrap to the `auxiliary.vision` model)."""

from __future__ import annotations

import base64
import io

MAX_SIDE = 2048  # px: longer sides are scaled down (vision models downsample beyond this anyway)
MAX_BYTES = 5 * 1024 * 1024  # what is sent after resizing (Hermes's resize target)
_MAGIC = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF87a", "image/gif"),
          (b"GIF89a", "image/gif"), (b"BM", "image/bmp"))


class ImageError(ValueError):
    """An image that cannot be sent (the message is for the model)."""


def sniff(data: bytes) -> str | None:
    """The MIME type of an image by its first bytes (png, jpeg, gif, webp, bmp), else None."""
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return next((mime for magic, mime in _MAGIC if data.startswith(magic)), None)


def data_url(data: bytes, mime: str) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def decode_data_url(url: str) -> bytes:
    head, _, payload = url.partition(",")
    if ";base64" not in head:
        raise ImageError("only base64 data: URLs are supported")
    try:
        return base64.b64decode(payload, validate=False)
    except ValueError as exc:
        raise ImageError(f"the data: URL is not valid base64 ({exc})") from None


def shrink(data: bytes) -> tuple[bytes, str]:
    """(bytes, mime) within MAX_SIDE and MAX_BYTES; ImageError for what is not an image or cannot fit."""
    mime = sniff(data)
    if mime is None:
        raise ImageError("not an image (expected PNG, JPEG, GIF, WebP or BMP data)")
    try:
        from PIL import Image
    except ImportError:
        if len(data) > MAX_BYTES:
            raise ImageError(f"image is {len(data) // 1024} KB, over the {MAX_BYTES // 1048576} MB limit, and Pillow "
                             "(pip install pillow) is not installed to shrink it") from None
        return data, mime
    with Image.open(io.BytesIO(data)) as img:
        if max(img.size) <= MAX_SIDE and len(data) <= MAX_BYTES and mime != "image/bmp":
            return data, mime
        img.thumbnail((MAX_SIDE, MAX_SIDE))
        out = io.BytesIO()
        img.convert("RGB").save(out, "JPEG", quality=85)
    if out.tell() > MAX_BYTES:
        raise ImageError("image is still over the size limit after resizing")
    return out.getvalue(), "image/jpeg"


def ask(ctx: object, prompt: str, image: str) -> str:
    """The vision model's answer about `image` (a data URL)."""
    vision = getattr(ctx, "vision", None)
    if vision is None:
        raise ImageError("no vision model is configured in this context")
    return vision(prompt, image)
