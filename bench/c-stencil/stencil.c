/* bench/c-stencil/stencil.c: a plain C k x k weighted-average 2D stencil,
 * the counterpart of `iomark mem stencil` for bench/vs-c-stencil.
 *
 * Same problem as iomark's: two N x N double arrays initialised in parallel
 * (first touch by the thread that owns the rows) with the affine field
 * 1 + 2i + 3j, the tent mask w(u,v) = (r+1-|u|)(r+1-|v|)/(r+1)^4 as a full
 * k x k table, each interior point summed u outer, v inner from 0.0, src
 * and dst swapped after every sweep, rows split statically over OpenMP
 * threads. Flops are 2k^2-1 per interior point; MFLOPS over the best sweep
 * after the first, as iomark reports. The result must equal the affine
 * field exactly (as iomark checks).
 *
 *   stencil N K SWEEPS      prints: best_sweep_s mflops check(0/1)
 *
 * Build: gcc -O3 -march=native -fopenmp -o stencil stencil.c
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: stencil N K SWEEPS\n");
        return 2;
    }
    const long n = atol(argv[1]);
    const int k = atoi(argv[2]);
    const int sweeps = atoi(argv[3]);
    const int r = (k - 1) / 2;
    if (n <= k || (k != 3 && k != 15) || sweeps < 1) {
        fprintf(stderr, "stencil: N > K, K 3 or 15, SWEEPS >= 1\n");
        return 2;
    }
    double *w = malloc(sizeof(double) * k * k);
    const double denom = pow(r + 1, 4);
    for (int u = 0; u < k; u++)
        for (int v = 0; v < k; v++)
            w[u * k + v] = (r + 1 - fabs((double)(u - r))) * (r + 1 - fabs((double)(v - r))) / denom;

    double *a = aligned_alloc(4096, sizeof(double) * n * n + 4096);
    double *b = aligned_alloc(4096, sizeof(double) * n * n + 4096);
    if (!a || !b) {
        fprintf(stderr, "stencil: out of memory\n");
        return 1;
    }
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++)
        for (long j = 0; j < n; j++) {
            a[i * n + j] = 1.0 + 2.0 * i + 3.0 * j;
            b[i * n + j] = a[i * n + j];
        }

    double best = 1e30;
    for (int s = 0; s < sweeps; s++) {
        const double *src = (s % 2 == 0) ? a : b;
        double *dst = (s % 2 == 0) ? b : a;
        double t0 = omp_get_wtime();
#pragma omp parallel for schedule(static)
        for (long i = r; i < n - r; i++)
            for (long j = r; j < n - r; j++) {
                double sum = 0.0;
                for (int u = 0; u < k; u++)
                    for (int v = 0; v < k; v++)
                        sum += w[u * k + v] * src[(i + u - r) * n + (j + v - r)];
                dst[i * n + j] = sum;
            }
        double t = omp_get_wtime() - t0;
        if ((s > 0 || sweeps == 1) && t < best)
            best = t;
    }
    const double *last = (sweeps % 2 == 1) ? b : a;
    int ok = 1;
    for (long i = 0; i < n && ok; i++)
        for (long j = 0; j < n; j++)
            if (last[i * n + j] != 1.0 + 2.0 * i + 3.0 * j) {
                ok = 0;
                break;
            }
    const double interior = (double)(n - 2 * r) * (double)(n - 2 * r);
    printf("%.6f %.1f %d\n", best, (2.0 * k * k - 1) * interior / best / 1e6, ok);
    free(a);
    free(b);
    free(w);
    return ok ? 0 : 1;
}
