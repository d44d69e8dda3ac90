/*
 * sbx_sha256.c: SHA-256 digests for receipts (SPEC 8.7: bwrap, the seccomp
 * filter, the policy), through libcrypto's EVP interface.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_int.h"

static void
to_hex(const unsigned char *md, unsigned n, char hex[SBX_SHA256_HEX])
{
	static const char digits[] = "0123456789abcdef";

	for (unsigned i = 0; i < n && i < 32; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
	hex[64] = '\0';
}

int
sbx_sha256_hex(const void *buf, size_t len, char hex[SBX_SHA256_HEX])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned n = 0;

	if ((buf == NULL && len > 0) || hex == NULL)
		return -EINVAL;
	if (EVP_Digest(buf != NULL ? buf : "", len, md, &n, EVP_sha256(),
	    NULL) != 1 || n != 32)
		return -EIO;
	to_hex(md, n, hex);
	return 0;
}

int
sbx_sha256_file(const char *path, char hex[SBX_SHA256_HEX])
{
	unsigned char md[EVP_MAX_MD_SIZE], buf[65536];
	EVP_MD_CTX *ctx = NULL;
	struct stat sb;
	unsigned n = 0;
	ssize_t r;
	int fd, rc = 0;

	if (path == NULL || hex == NULL)
		return -EINVAL;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return -errno;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		rc = errno ? -errno : -EINVAL;
		goto out;
	}
	if ((ctx = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
		rc = -EIO;
		goto out;
	}
	for (;;) {
		r = read(fd, buf, sizeof buf);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = -errno;
			goto out;
		}
		if (r == 0)
			break;
		if (EVP_DigestUpdate(ctx, buf, (size_t)r) != 1) {
			rc = -EIO;
			goto out;
		}
	}
	if (EVP_DigestFinal_ex(ctx, md, &n) != 1 || n != 32) {
		rc = -EIO;
		goto out;
	}
	to_hex(md, n, hex);
out:
	EVP_MD_CTX_free(ctx);
	close(fd);
	return rc;
}
