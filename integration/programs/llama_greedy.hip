// Greedy decoding with libllama, printing each token with its margin.
//
// Usage: llama_greedy MODEL.gguf N_GPU_LAYERS N_PREDICT PROMPT [FOLLOW]
//
// Prints one line per generated token: `token <id> margin <top1 - top2 logit>`. With FOLLOW,
// a comma-separated list of token ids, step i feeds FOLLOW[i] to the model instead of its own
// choice (so two backends see the same context at every step, whatever they choose), and each
// step also prints `logits <v0> <v1> …` (every logit, `%.6g`). The test runs
// it on the CPU backend (0 GPU layers) and on the HIP backend (every layer on the simulated
// GPU) and compares the tokens. The margins say where the comparison means something: two
// correct backends round differently, so where the CPU's two best logits are nearly equal the
// choice may differ and everything after it too.
//
// Host code only (hipcc is the sid root's C++ compiler); the kernels are ggml's.
#include <llama.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

int main(int argc, char **argv) {
    if (argc != 5 && argc != 6) {
        fprintf(stderr, "usage: %s MODEL N_GPU_LAYERS N_PREDICT PROMPT [FOLLOW]\n", argv[0]);
        return 2;
    }
    const char *path = argv[1];
    const int gpu_layers = atoi(argv[2]);
    const int n_predict = atoi(argv[3]);
    const char *prompt = argv[4];
    std::vector<llama_token> follow;
    if (argc == 6) {
        for (const char *p = argv[5]; *p;) {
            char *end = nullptr;
            follow.push_back((llama_token)strtol(p, &end, 10));
            if (end == p) {
                fprintf(stderr, "FAIL: FOLLOW must be comma-separated token ids: %s\n", argv[5]);
                return 2;
            }
            p = *end == ',' ? end + 1 : end;
        }
        if ((int)follow.size() < n_predict) {
            fprintf(stderr, "FAIL: FOLLOW has %zu tokens, N_PREDICT is %d\n", follow.size(), n_predict);
            return 2;
        }
    }

    llama_backend_init();
    llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = gpu_layers;
    llama_model *model = llama_model_load_from_file(path, mp);
    if (!model) {
        fprintf(stderr, "FAIL: cannot load %s\n", path);
        return 1;
    }
    const llama_vocab *vocab = llama_model_get_vocab(model);
    const int n_vocab = llama_vocab_n_tokens(vocab);

    std::vector<llama_token> tokens(256);
    int n = llama_tokenize(vocab, prompt, (int)strlen(prompt), tokens.data(), (int)tokens.size(), true, false);
    if (n <= 0) {
        fprintf(stderr, "FAIL: cannot tokenize the prompt (%d)\n", n);
        return 1;
    }
    tokens.resize(n);

    llama_context_params cp = llama_context_default_params();
    cp.n_ctx = 256;
    cp.n_batch = 256;
    cp.no_perf = true;
    llama_context *ctx = llama_init_from_model(model, cp);
    if (!ctx) {
        fprintf(stderr, "FAIL: cannot create a context\n");
        return 1;
    }

    llama_batch batch = llama_batch_get_one(tokens.data(), (int)tokens.size());
    llama_token next = 0;
    for (int i = 0; i < n_predict; i++) {
        if (llama_decode(ctx, batch) != 0) {
            fprintf(stderr, "FAIL: llama_decode failed at step %d\n", i);
            return 1;
        }
        const float *logits = llama_get_logits_ith(ctx, -1);
        int best = 0, second = 1;
        if (logits[second] > logits[best]) {
            best = 1;
            second = 0;
        }
        for (int t = 2; t < n_vocab; t++) {
            if (logits[t] > logits[best]) {
                second = best;
                best = t;
            } else if (logits[t] > logits[second]) {
                second = t;
            }
        }
        printf("token %d margin %.6f\n", best, logits[best] - logits[second]);
        if (!follow.empty()) {
            printf("logits");
            for (int t = 0; t < n_vocab; t++) {
                printf(" %.6g", logits[t]);
            }
            printf("\n");
        }
        fflush(stdout);
        next = follow.empty() ? best : follow[i];
        batch = llama_batch_get_one(&next, 1);
    }
    llama_free(ctx);
    llama_model_free(model);
    llama_backend_free();
    printf("PASS: %d tokens\n", n_predict);
    return 0;
}
