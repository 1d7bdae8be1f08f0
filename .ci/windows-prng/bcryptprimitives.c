/* A stand-in for bcryptprimitives.dll under wine 8.0, which lacks it:
 * Rust's std (1.78 and later) imports ProcessPrng from it at start-up, so
 * without it every Rust program exits at once (rust-lang/rust#121337).
 * ProcessPrng fills a buffer with random bytes; RtlGenRandom
 * (advapi32!SystemFunction036) does the same. Only for the tests under
 * wine (.ci/windows); real Windows has the real DLL. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x7fffffff ? 0x7fffffff : (ULONG)length;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
