#include "textflag.h"

// func lanes(crc uint32, p []byte, n int, j *[2]uint64) uint32
TEXT ·lanes(SB), NOSPLIT, $0-52
	MOVL crc+0(FP), AX
	MOVQ p_base+8(FP), SI
	MOVQ p_len+16(FP), CX
	MOVQ n+32(FP), DX
	MOVQ j+40(FP), DI
	LEAQ (SI)(DX*1), R9
	LEAQ (R9)(DX*1), R10
	XORL BX, BX
	XORL R11, R11
	XORQ R12, R12

	// Three independent chains: each CRC32 takes three cycles to give
	// its result, and the processor starts one every cycle.
three:
	CRC32Q (SI)(R12*1), AX
	CRC32Q (R9)(R12*1), BX
	CRC32Q (R10)(R12*1), R11
	ADDQ $8, R12
	CMPQ R12, DX
	JB three

	// AX·x^(16n·8) xor BX·x^(8n·8) xor R11.
	MOVOU (DI), X0
	MOVQ AX, X1
	MOVQ BX, X2
	PCLMULQDQ $0x00, X0, X1
	PCLMULQDQ $0x10, X0, X2
	PXOR X2, X1
	MOVQ X1, R13
	XORL AX, AX
	CRC32Q R13, AX
	XORL R11, AX

	// The rest.
	LEAQ (R10)(DX*1), SI
	LEAQ (DX)(DX*2), R12
	SUBQ R12, CX

words:
	CMPQ CX, $8
	JB bytes
	CRC32Q (SI), AX
	ADDQ $8, SI
	SUBQ $8, CX
	JMP words

bytes:
	TESTQ CX, CX
	JZ done
	CRC32B (SI), AX
	INCQ SI
	DECQ CX
	JMP bytes

done:
	MOVL AX, ret+48(FP)
	RET

// func fold(crc uint32, p []byte, k *folding) uint32
//
// Four 512-bit accumulators, each four 16-byte lanes, hold p as it is read:
// a lane moves on 256 bytes at a time, its two halves multiplied without
// carries by x^(8·256+63) and x^(8·256-1) (k.by256), and the next bytes
// added. The accumulators then fold into one, its lanes into one, that
// into what is left 16 bytes at a time, and CRC32 instructions take its
// 16 bytes and the rest. len(p) >= 256.
TEXT ·fold(SB), NOSPLIT, $0-44
	MOVL crc+0(FP), AX
	MOVQ p_base+8(FP), SI
	MOVQ p_len+16(FP), CX
	MOVQ k+32(FP), DI

	VMOVDQU64 0(SI), Z0
	VMOVDQU64 64(SI), Z1
	VMOVDQU64 128(SI), Z2
	VMOVDQU64 192(SI), Z3
	VMOVD AX, X4
	VPXORQ Z4, Z0, Z0
	ADDQ $256, SI
	SUBQ $256, CX
	VMOVDQU64 0(DI), Z10

by256:
	CMPQ CX, $256
	JB four
	VPCLMULQDQ $0x00, Z10, Z0, Z4
	VPCLMULQDQ $0x11, Z10, Z0, Z0
	VPTERNLOGD $0x96, 0(SI), Z4, Z0
	VPCLMULQDQ $0x00, Z10, Z1, Z5
	VPCLMULQDQ $0x11, Z10, Z1, Z1
	VPTERNLOGD $0x96, 64(SI), Z5, Z1
	VPCLMULQDQ $0x00, Z10, Z2, Z6
	VPCLMULQDQ $0x11, Z10, Z2, Z2
	VPTERNLOGD $0x96, 128(SI), Z6, Z2
	VPCLMULQDQ $0x00, Z10, Z3, Z7
	VPCLMULQDQ $0x11, Z10, Z3, Z3
	VPTERNLOGD $0x96, 192(SI), Z7, Z3
	ADDQ $256, SI
	SUBQ $256, CX
	JMP by256

four:
	// Z0-Z2 moved on to where Z3 ends, at once.
	VMOVDQU64 64(DI), Z12
	VMOVDQU64 128(DI), Z13
	VMOVDQU64 192(DI), Z11
	VPCLMULQDQ $0x00, Z12, Z0, Z4
	VPCLMULQDQ $0x11, Z12, Z0, Z5
	VPCLMULQDQ $0x00, Z13, Z1, Z6
	VPCLMULQDQ $0x11, Z13, Z1, Z7
	VPCLMULQDQ $0x00, Z11, Z2, Z8
	VPCLMULQDQ $0x11, Z11, Z2, Z9
	VPTERNLOGD $0x96, Z4, Z5, Z6
	VPTERNLOGD $0x96, Z7, Z8, Z9
	VPTERNLOGD $0x96, Z6, Z9, Z3

by64:
	CMPQ CX, $64
	JB one
	VPCLMULQDQ $0x00, Z11, Z3, Z4
	VPCLMULQDQ $0x11, Z11, Z3, Z3
	VPTERNLOGD $0x96, 0(SI), Z4, Z3
	ADDQ $64, SI
	SUBQ $64, CX
	JMP by64

one:
	// Lanes 0-2 moved on to lane 3, which k.lanes leaves at zero.
	VMOVDQU64 256(DI), Z12
	VPCLMULQDQ $0x00, Z12, Z3, Z4
	VPCLMULQDQ $0x11, Z12, Z3, Z5
	VEXTRACTI32X4 $3, Z3, X6
	VPXORQ Z5, Z4, Z4
	VEXTRACTI64X4 $1, Z4, Y5
	VPXORQ Y5, Y4, Y4
	VEXTRACTI32X4 $1, Y4, X5
	VPXORQ X5, X4, X4
	VPXORQ X6, X4, X4
	VMOVDQU64 320(DI), X13

by16:
	CMPQ CX, $16
	JB crc
	VPCLMULQDQ $0x00, X13, X4, X5
	VPCLMULQDQ $0x11, X13, X4, X4
	VPTERNLOGD $0x96, 0(SI), X5, X4
	ADDQ $16, SI
	SUBQ $16, CX
	JMP by16

crc:
	VMOVQ X4, R8
	VPEXTRQ $1, X4, R9
	VZEROUPPER
	XORL AX, AX
	CRC32Q R8, AX
	CRC32Q R9, AX

	// Under 16 bytes.
	CMPQ CX, $8
	JB fl
	CRC32Q (SI), AX
	ADDQ $8, SI
fl:
	TESTQ $4, CX
	JZ fw
	CRC32L (SI), AX
	ADDQ $4, SI
fw:
	TESTQ $2, CX
	JZ fb
	CRC32W (SI), AX
	ADDQ $2, SI
fb:
	TESTQ $1, CX
	JZ fdone
	CRC32B (SI), AX

fdone:
	MOVL AX, ret+40(FP)
	RET
