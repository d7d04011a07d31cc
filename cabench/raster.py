"""A figure's PNG made from its PDF: the PDF's one page rasterised (pypdfium2) and written as PNG (Pillow).

``cabench plot`` draws each figure once, as a PDF, and makes the PNG from that page rather than having matplotlib
draw the figure a second time: on the full ``make reproduce`` results matplotlib's PNGs took 7.6 s of CPU for 41
figures, rasterising their PDFs 1.6 s (docs/decisions.md, "Figures drawn only when their inputs change"). The PNG
is the PDF's page, cut as the PDF is cut, at ``dpi`` dots per inch, on white; equal PDFs give equal PNGs (no date or
library version is written).
"""

from __future__ import annotations

import io

from PIL.PngImagePlugin import PngInfo

from cabench.errors import CabenchError

POINTS_PER_INCH = 72
#: zlib's level for the PNG: on the 41 ``make reproduce`` figures level 3 wrote 5.36 MB in 0.66 s of CPU, Pillow's
#: default 6 5.62 MB in 0.96 s, level 9 5.48 MB in 4.7 s.
COMPRESSION = 3


def png_of_pdf(pdf: bytes, dpi: int, metadata: dict[str, str | None]) -> bytes:
    """The first page of the PDF ``pdf`` rasterised at ``dpi`` on white, as PNG bytes with ``metadata`` (text
    entries, None left out) and the resolution recorded. pypdfium2 is imported here: a broken installation of it
    stops PNGs only, in one line."""
    try:
        import pypdfium2
    except (ImportError, OSError) as exc:  # OSError: its library is there but cannot be loaded
        why = str(exc).splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CabenchError(f"pypdfium2 cannot be imported ({why}): PNGs are drawn with it; reinstall cabench's "
                           "dependencies (make venv), or plot --format pdf or svg") from None
    document = pypdfium2.PdfDocument(pdf)
    try:
        image = document[0].render(scale=dpi / POINTS_PER_INCH).to_pil()
    finally:
        document.close()
    info = PngInfo()
    for key, value in metadata.items():
        if value is not None:
            info.add_text(key, value)
    out = io.BytesIO()
    image.save(out, format="PNG", pnginfo=info, dpi=(dpi, dpi), compress_level=COMPRESSION)
    return out.getvalue()
