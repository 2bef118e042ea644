"""How many SMS parts a text takes: GSM-7 when every character is in its alphabet, else UCS-2.

One part holds 160 GSM-7 characters or 70 UCS-2 code units; a longer text is sent in
parts of 153 or 67, the rest of each part being the header that joins them. Characters of
the GSM-7 extension table take two places. ``static/delivery/template_editor.js`` counts
the same way while one types.
"""

from __future__ import annotations

from dataclasses import dataclass

GSM7_BASIC = (
    "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?"
    "¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"
)
GSM7_EXTENSION = "^{}\\[~]|€\f"


@dataclass(frozen=True)
class SmsCount:
    encoding: str  # "GSM-7" or "UCS-2"
    units: int
    segments: int


def sms_count(text: str) -> SmsCount:
    if all(c in GSM7_BASIC or c in GSM7_EXTENSION for c in text):
        units = sum(2 if c in GSM7_EXTENSION else 1 for c in text)
        single, multi, encoding = 160, 153, "GSM-7"
    else:
        units = len(text.encode("utf-16-le")) // 2
        single, multi, encoding = 70, 67, "UCS-2"
    if units == 0:
        return SmsCount(encoding, 0, 0)
    segments = 1 if units <= single else -(-units // multi)
    return SmsCount(encoding, units, segments)
