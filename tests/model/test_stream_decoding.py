"""A compressed streamed answer, decoded piece by piece: gzip, zlib and raw deflate, the
decoded-size cap, and the encodings toolrelay refuses."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable

import pytest

from toolrelay.model._http_failures import AnswerRejected
from toolrelay.model.encoding import StreamDecoder

BODY = b"event: response.output_text.delta\ndata: {\"delta\":\"x\"}\n\n" * 200


def raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


@pytest.mark.parametrize(
    ("encoding", "encode"),
    [("gzip", gzip.compress), ("deflate", zlib.compress), ("deflate", raw_deflate), ("identity", bytes)],
    ids=["gzip", "zlib-deflate", "raw-deflate", "identity"],
)
@pytest.mark.parametrize("size", [1, 13, 4096])
def test_pieces_of_any_size_decode_to_the_body(
    encoding: str, encode: Callable[[bytes], bytes], size: int
) -> None:
    packed = encode(BODY)
    decoder = StreamDecoder(encoding, cap=1 << 20)
    assert b"".join(decoder.feed(packed[i:i + size]) for i in range(0, len(packed), size)) == BODY


def test_the_decoded_size_is_capped_and_bad_encodings_refused() -> None:
    decoder = StreamDecoder("gzip", cap=1000)
    with pytest.raises(AnswerRejected, match="larger than 1000 bytes once decompressed"):
        decoder.feed(gzip.compress(BODY))
    with pytest.raises(AnswerRejected, match="encoded with 'br'"):
        StreamDecoder("br", cap=1000)
    with pytest.raises(AnswerRejected, match="encoded twice"):
        StreamDecoder("gzip, deflate", cap=1000)
    with pytest.raises(AnswerRejected, match="says it is gzip-encoded but does not decompress"):
        StreamDecoder("gzip", cap=1000).feed(b"not gzip at all")
