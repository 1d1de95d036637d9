"""Writes a random-initialised Llama model and a word-level tokenizer for `transformers serve`.

The tokenizer maps the word `w<i>` to token id i (i < VOCAB), so kernelab's text prompts (ids
written as `w123 w456 ...`) tokenize to exactly the ids it drew: the prompt token count is exact.
There is no BOS/EOS token and the generation config has no EOS, so every request generates
exactly `max_tokens` tokens. Nothing is downloaded.

usage: python3 make_model.py OUT_DIR [--tokenizer-only]
"""

import json
import sys
from pathlib import Path

VOCAB = 4096


def tokenizer(out: Path) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {f"w{i}": i for i in range(VOCAB)}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="w0"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    # Words are joined with spaces when decoded.
    tok.decoder = decoders.WordPiece(prefix="##", cleanup=False)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="w0")
    fast.save_pretrained(out)


def model(out: Path) -> None:
    import torch
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=2048,
        intermediate_size=5632,
        num_hidden_layers=8,
        num_attention_heads=16,
        num_key_value_heads=16,
        max_position_embeddings=8192,
        bos_token_id=None,
        eos_token_id=None,
        pad_token_id=0,
        torch_dtype="bfloat16",
    )
    with torch.device("cuda" if torch.cuda.is_available() else "cpu"):
        m = LlamaForCausalLM(cfg).to(torch.bfloat16)
    m.generation_config = GenerationConfig(do_sample=False, eos_token_id=None, pad_token_id=0)
    m.save_pretrained(out)


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    tokenizer(out)
    if "--tokenizer-only" not in sys.argv:
        model(out)
    print(json.dumps({"out": str(out), "files": sorted(p.name for p in out.iterdir())}))


if __name__ == "__main__":
    main()
