//go:build !unix

package sqlfe

func stackDepthLimit() int { return depthLimitForStack(0) }
