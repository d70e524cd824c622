/*
 * noop.c -- a C program that does nothing: the baseline cost of fork +
 * exec + exit for the resume-latency benchmark.
 */
int main(void)
{
    return 0;
}
