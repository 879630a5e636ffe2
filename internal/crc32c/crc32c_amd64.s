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
